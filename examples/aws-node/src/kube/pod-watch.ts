/**
 * The pods bound to this node, kept current by a LIST and a WATCH from its resourceVersion (the shape of the
 * reference's informer cache of pods, field selector `spec.nodeName`). A transport loop only: what the pods
 * mean is the sink's (daemon/bound-pods.ts).
 */
import { type BackoffPolicy, backoffDelay, type RandomSource } from '@vpc-cni-kit/eni-manager';
import type { Logger } from '../log/logger.js';
import type { InClusterTarget, NotInCluster } from './in-cluster.js';
import { isKubeCallError, jsonObject, type PodWatchApi } from './kube-api.js';
import { KUBE_RECONNECT_BACKOFF } from './kube-side.js';

/** Where the watched pods go. Every object is as the API sent it: the sink validates it. */
export interface PodWatchSink {
  /** A LIST answered: these are all the node's pods now (what the sink knew before is replaced). */
  reset(items: readonly unknown[]): void;
  /** An ADDED or MODIFIED event. */
  upsert(object: unknown): void;
  /** A DELETED event. */
  remove(object: unknown): void;
  /** The API cannot be asked (unreachable, or the watch is refused): what the sink knows is stale. */
  lost(): void;
}

/** What {@link PodWatch} needs. */
export interface PodWatchDeps {
  /** This node's name (`MY_NODE_NAME`). */
  readonly nodeName: string;
  /** The in-cluster target, or why there is none. */
  readonly target: InClusterTarget | NotInCluster;
  /** Builds the LIST/WATCH client. */
  readonly connect: (target: InClusterTarget) => PodWatchApi;
  readonly sink: PodWatchSink;
  readonly log: Logger;
  /** Jitter source (backoff, watch timeouts). */
  readonly random: RandomSource;
  /** Timer (injected for tests); resolves early when `signal` aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Monotonic ms (how long a stream stayed open). */
  readonly now: () => number;
  /**
   * Server-side timeout of each watch, s. @defaultValue 300–600 s, drawn per watch (client-go's reflector
   * spreads its watches the same way, so a restarted API server is not re-watched by every node at once)
   */
  readonly watchTimeoutSeconds?: () => number;
  /** Reconnect backoff. @defaultValue {@link KUBE_RECONNECT_BACKOFF} */
  readonly backoff?: BackoffPolicy;
}

/** What the watch is doing, for introspection and tests. */
export interface PodWatchStatus {
  /**
   * `off` (no cluster, or not started), `listing` (connecting or relisting), `watching`, `unreachable` (the API
   * does not answer) or `forbidden` (RBAC refuses list/watch on pods: the daemon's ClusterRole lacks them).
   */
  readonly state: 'off' | 'listing' | 'watching' | 'unreachable' | 'forbidden';
  /** LISTs answered so far (the first, and one after every 410 Gone, ERROR or lost API). */
  readonly lists: number;
  /** WATCH streams opened so far. */
  readonly watches: number;
  /** The resourceVersion the next watch resumes from (undefined: the next step is a LIST). */
  readonly resourceVersion: string | undefined;
  /** Lines of the stream that were not a watch event, ignored. */
  readonly malformed: number;
}

/** How one watch stream ended. */
type StreamEnd = 'ended' | 'expired' | 'error';

/** What one watch stream carried and how it ended. */
interface StreamOutcome {
  readonly end: StreamEnd;
  /** Events it carried (bookmarks included). */
  readonly events: number;
  /** It ended without an ERROR event once its `timeoutSeconds` had passed: the server ended it as asked. */
  readonly timedOut: boolean;
}

/** The resourceVersion of an object or list, when it has a usable one. */
function resourceVersionOf(o: unknown): string | undefined {
  const rv = jsonObject(jsonObject(o)?.metadata)?.resourceVersion;
  return typeof rv === 'string' && rv !== '' ? rv : undefined;
}

/**
 * Lists the pods bound to this node, then watches them from the list's resourceVersion (bookmarks allowed),
 * resuming from the last resourceVersion seen whenever a stream ends: at once when it carried events or the server
 * ended it at its `timeoutSeconds`, after a backoff when it ended early with nothing on it. A `410 Gone` (the
 * resourceVersion is too old) or any other ERROR event relists. An API that does not answer or refuses is retried
 * with jittered backoff ({@link KUBE_RECONNECT_BACKOFF}); the sink hears {@link PodWatchSink.lost} and the log says so once,
 * not per retry, and once more when the watch works again.
 */
export class PodWatch {
  #state: PodWatchStatus['state'] = 'off';
  #lists = 0;
  #watches = 0;
  #malformed = 0;
  #rv: string | undefined;
  #stop = new AbortController();
  #loop: Promise<void> | undefined;
  #api: PodWatchApi | undefined;

  /** @param deps - node, target, client, sink, logger and time sources */
  constructor(private readonly deps: PodWatchDeps) {}

  /** Current state. */
  status(): PodWatchStatus {
    return {
      state: this.#state,
      lists: this.#lists,
      watches: this.#watches,
      resourceVersion: this.#rv,
      malformed: this.#malformed,
    };
  }

  /** Starts listing and watching in the background (returns at once); without a cluster, says so and stays off. */
  start(): void {
    const t = this.deps.target;
    if (this.#loop !== undefined || this.#stop.signal.aborted) return;
    if (!('server' in t)) {
      this.deps.log.info('pods bound to this node not watched', { reason: t.reason });
      return;
    }
    this.#state = 'listing';
    this.#api = this.deps.connect(t);
    this.#loop = this.#run(this.#api).catch((e: unknown) => {
      // Not expected (every failure is retried): the pool then runs as without the watch.
      this.deps.log.error('pod watch stopped', { error: String(e) });
      this.#state = 'unreachable';
      this.deps.sink.lost();
    });
  }

  /** Ends the stream in flight and every retry, then closes the watch's connections. */
  async stop(): Promise<void> {
    this.#stop.abort();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.#loop, new Promise<void>((r) => (timer = setTimeout(r, 1000)))]);
    clearTimeout(timer);
    this.#api?.close();
    this.#state = 'off';
  }

  async #run(api: PodWatchApi): Promise<void> {
    const { log, nodeName } = this.deps;
    const signal = this.#stop.signal;
    const backoff = this.deps.backoff ?? KUBE_RECONNECT_BACKOFF;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (this.#rv === undefined) {
          this.#state = this.#state === 'watching' ? 'listing' : this.#state;
          const list = await api.listNodePods(nodeName);
          const items = jsonObject(list)?.items;
          const rv = resourceVersionOf(list);
          if (!Array.isArray(items) || rv === undefined) {
            // Not a PodList: nothing to resume from. Counted as a failure, retried after a backoff.
            log.debug('pod list ignored: no items or resourceVersion', { node: nodeName });
            this.#malformed += 1;
            await this.deps.sleep(backoffDelay(backoff, failures++, this.deps.random), signal);
            continue;
          }
          if (signal.aborted) return;
          this.deps.sink.reset(items);
          this.#lists += 1;
          this.#rv = rv;
          if (this.#state !== 'listing')
            log.info('pods bound to this node watched again', { node: nodeName, pods: items.length });
          else if (this.#lists === 1)
            log.info('watching pods bound to this node', { node: nodeName, pods: items.length });
          this.#state = 'watching';
        }
        const { end, events, timedOut } = await this.#watchOnce(api, this.#rv);
        if (signal.aborted) return;
        this.#state = 'watching';
        if (end !== 'ended') this.#rv = undefined;
        // A stream that carried events, or that the server ended at its timeout (a quiet node: nothing changed,
        // no bookmark came), worked: the next one opens at once, the backoff starts over. One that ended before
        // its time with nothing on it, or with only an ERROR, waits before the next request, so a server that
        // ends every watch at once, or answers each with an ERROR, is not asked in a tight loop. The usual 410 —
        // a resume that came too late — relists at once, the first time.
        if (events > 0 || timedOut) failures = 0;
        else if (end === 'expired' && failures === 0) failures = 1;
        else await this.deps.sleep(backoffDelay(backoff, failures++, this.deps.random), signal);
      } catch (e) {
        if (signal.aborted) return;
        const refused = isKubeCallError(e, 'Forbidden', 'Unauthorized');
        const state = refused ? 'forbidden' : 'unreachable';
        if (this.#state !== state) {
          if (refused)
            log.warn(
              'pods bound to this node cannot be watched: the adaptive warm pool counts none (grant list and watch on pods to aws-node, manifests/rbac.yaml); retrying',
              { node: nodeName, error: (e as Error).message },
            );
          else
            log.warn(
              'Kubernetes API unreachable: pods bound to this node are not counted by the adaptive warm pool until it answers',
              { node: nodeName, error: e instanceof Error ? e.message : String(e) },
            );
        }
        this.#state = state;
        this.#rv = undefined;
        this.deps.sink.lost();
        await this.deps.sleep(backoffDelay(backoff, failures++, this.deps.random), signal);
      }
    }
  }

  /** One WATCH stream from `rv`: its events go to the sink, its resourceVersions are kept. */
  async #watchOnce(api: PodWatchApi, rv: string): Promise<StreamOutcome> {
    const { log, sink, nodeName } = this.deps;
    const stream = new AbortController();
    const onStop = () => stream.abort();
    this.#stop.signal.addEventListener('abort', onStop, { once: true });
    let end: StreamEnd = 'ended';
    let events = 0;
    const ignore = (why: string) => {
      this.#malformed += 1;
      log.debug('pod watch: line ignored', { node: nodeName, why });
    };
    const onLine = (line: string) => {
      let ev: Record<string, unknown> | undefined;
      try {
        ev = jsonObject(JSON.parse(line));
      } catch {
        return ignore('not JSON');
      }
      const object = ev?.object;
      if (ev === undefined || typeof ev.type !== 'string' || jsonObject(object) === undefined)
        return ignore('not a watch event');
      const at = resourceVersionOf(object);
      switch (ev.type) {
        case 'ADDED':
        case 'MODIFIED':
          sink.upsert(object);
          break;
        case 'DELETED':
          sink.remove(object);
          break;
        case 'BOOKMARK':
          break;
        case 'ERROR': {
          const status = jsonObject(object)!;
          end =
            status.code === 410 || status.reason === 'Expired' || status.reason === 'Gone'
              ? 'expired'
              : 'error';
          log.debug('pod watch: ERROR event, relisting', {
            node: nodeName,
            code: typeof status.code === 'number' ? status.code : undefined,
            reason: typeof status.reason === 'string' ? status.reason : undefined,
          });
          stream.abort();
          return;
        }
        default:
          return ignore(`unknown event type ${JSON.stringify(ev.type).slice(0, 40)}`);
      }
      events += 1;
      if (at !== undefined) this.#rv = at;
    };
    this.#watches += 1;
    const timeoutSeconds = this.deps.watchTimeoutSeconds?.() ?? 300 + Math.floor(this.deps.random() * 300);
    const opened = this.deps.now();
    try {
      await api.watchNodePods(nodeName, {
        resourceVersion: rv,
        timeoutSeconds,
        onLine,
        signal: stream.signal,
      });
    } finally {
      this.#stop.signal.removeEventListener('abort', onStop);
    }
    return { end, events, timedOut: end === 'ended' && this.deps.now() - opened >= timeoutSeconds * 1000 };
  }
}
