import {
  type BackoffPolicy,
  backoffDelay,
  type CallEvent,
  type RandomSource,
} from '@vpc-cni-kit/eni-manager';
import type { KubeSettings } from '../config/kube-settings.js';
import type { Logger } from '../log/logger.js';
import { type CniNodeFeature, ensureCniNode } from './cni-node.js';
import { type EniConfigProblemCode, eniConfigProblemEvent } from './eni-config.js';
import { awsNodeWarningEvent, missingIamPermissionsEvent } from './iam-event.js';
import type { InClusterTarget, NotInCluster } from './in-cluster.js';
import { isKubeCallError, type KubeApi, KubeCallError, type KubeObject } from './kube-api.js';
import { clearPodIpAnnotation, setPodIpAnnotation } from './pod-ip-annotation.js';

/** Reconnect policy when the API is unreachable: 0.5 s → 5 s (the reference polls every 5 s), ×2, jitter 0.2. */
export const KUBE_RECONNECT_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 5000, factor: 2, jitter: 0.2 };

/** At most one MissingIAMPermissions Event per EC2 action in this window (the reference's recorder aggregates). */
export const IAM_EVENT_INTERVAL_MS = 60_000;

const MAX_PENDING_ANNOTATIONS = 10_000;
const MAX_PENDING_EVENTS = 100;

/** What {@link KubeSide} needs. */
export interface KubeSideDeps {
  readonly settings: KubeSettings;
  readonly log: Logger;
  /** CNINode features this daemon's configuration enables. */
  readonly features: readonly CniNodeFeature[];
  /** The in-cluster target, or why there is none. */
  readonly target: InClusterTarget | NotInCluster;
  /** Builds the API client. */
  readonly connect: (target: InClusterTarget) => Promise<KubeApi>;
  /** Wall-clock ms (Event times). */
  readonly now: () => number;
  /** Jitter source. */
  readonly random: RandomSource;
  /** Timer (injected for tests). */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

type Job =
  | {
      readonly kind: 'annotate';
      readonly key: string;
      readonly pod: { namespace: string; name: string };
      readonly ip: string;
      readonly released?: string;
    }
  | {
      readonly kind: 'event';
      readonly action: string;
      readonly at: number;
      /** Builds another Event than MissingIAMPermissions (about the aws-node pod). */
      readonly build?: (pod: { namespace: string; name: string; uid?: string }) => KubeObject;
      /** The namespace the Event goes to (default: the aws-node pod's). */
      readonly namespace?: string;
    };

/** The state the introspection endpoint and tests read. */
export interface KubeSideStatus {
  /** `off` (no cluster), `connecting`, `connected` or `unreachable`. */
  readonly state: 'off' | 'connecting' | 'connected' | 'unreachable';
  /** The CNINode is known to carry the wanted features. */
  readonly cniNodeReady: boolean;
  /** Work waiting for the API. */
  readonly pending: number;
}

/**
 * The daemon's Kubernetes side. Without security groups for pods nothing on the pod path waits for it: ADD and
 * DEL only queue work here, and an unreachable API server (at start or later) degrades just the features that
 * need it — the CNINode features, MissingIAMPermissions Events and pod IP annotations — which catch up once it
 * answers again. With `ENABLE_POD_ENI` each ADD reads its pod through {@link KubeSide.call} (ADR 0016). It reconnects
 * with jittered backoff and says in the log when it loses and regains the API.
 */
export class KubeSide {
  #state: KubeSideStatus['state'];
  #api: KubeApi | undefined;
  #cniNodeReady = false;
  /** The last CNINode write failed: wait before the next try (a feature change alone is written at once). */
  #cniNodeFailed = false;
  /** Bumped by {@link setFeature}; a CNINode write counts only for the features it carried. */
  #featuresVersion = 0;
  #features: CniNodeFeature[];
  #annotations = new Map<string, Job & { kind: 'annotate' }>();
  #events: (Job & { kind: 'event' })[] = [];
  #lastEvent = new Map<string, number>();
  #serial = 0;
  #podUid: string | undefined;
  #nodeUid: string | undefined;
  #wake: (() => void) | undefined;
  #stop = new AbortController();
  #loop: Promise<void> | undefined;

  /** @param deps - settings, logger, target and time sources */
  constructor(private readonly deps: KubeSideDeps) {
    this.#features = [...deps.features];
    this.#state = 'server' in deps.target ? 'connecting' : 'off';
  }

  /** The API server and credentials this side uses, or why there are none (read once, at start). */
  get target(): InClusterTarget | NotInCluster {
    return this.deps.target;
  }

  /** Current state. */
  status(): KubeSideStatus {
    return {
      state: this.#state,
      cniNodeReady: this.#cniNodeReady,
      pending: this.#annotations.size + this.#events.length,
    };
  }

  /** Starts connecting in the background (returns at once). */
  start(): void {
    const t = this.deps.target;
    if (!('server' in t)) {
      // An API server is configured but its credentials are not usable: worth a warning, not just a note.
      const level = this.deps.settings.apiServer === undefined ? 'info' : 'warn';
      this.deps.log[level]('Kubernetes API not used', {
        reason: t.reason,
        features: 'CNINode, MissingIAMPermissions events, pod IP annotations are off',
      });
      return;
    }
    this.#loop = this.#run(t).catch((e: unknown) =>
      this.deps.log.error('Kubernetes side stopped', { error: String(e) }),
    );
  }

  /** The eni-manager hook: an EC2 call refused with UnauthorizedOperation becomes a Warning Event. */
  readonly onEc2Call = (e: CallEvent): void => {
    if (this.#state === 'off' || e.service !== 'ec2' || e.errorCode !== 'UnauthorizedOperation') return;
    const at = this.deps.now();
    const last = this.#lastEvent.get(e.action);
    if (last !== undefined && at - last < IAM_EVENT_INTERVAL_MS) return;
    this.#lastEvent.set(e.action, at);
    if (this.#events.length >= MAX_PENDING_EVENTS) this.#events.shift();
    this.#events.push({ kind: 'event', action: e.action, at });
    this.#kick();
  };

  /**
   * Custom networking: the node's ENIConfig cannot be used. Emits one Warning Event per problem and minute
   * (`EniConfigNotFound` / `EniConfigInvalid`, about the aws-node pod).
   */
  eniConfigProblem(code: EniConfigProblemCode, message: string): void {
    if (this.#state === 'off') return;
    const at = this.deps.now();
    const key = `eniconfig ${code} ${message}`;
    const last = this.#lastEvent.get(key);
    if (last !== undefined && at - last < IAM_EVENT_INTERVAL_MS) return;
    this.#lastEvent.set(key, at);
    if (this.#events.length >= MAX_PENDING_EVENTS) this.#events.shift();
    const nodeName = this.deps.settings.nodeName;
    this.#events.push({
      kind: 'event',
      action: code,
      at,
      build: (pod) => eniConfigProblemEvent({ code, message, pod, nodeName, nowMs: at }),
    });
    this.#kick();
  }

  /**
   * A Warning Event about a workload pod (security groups for pods: why its branch ENI could not be set up),
   * reported by `aws-node` from this node. At most one per pod, reason and minute.
   */
  podEvent(pod: { namespace: string; name: string }, reason: string, note: string): void {
    if (this.#state === 'off' || pod.name === '') return;
    const at = this.deps.now();
    const key = `pod ${pod.namespace}/${pod.name} ${reason}`;
    const last = this.#lastEvent.get(key);
    if (last !== undefined && at - last < IAM_EVENT_INTERVAL_MS) return;
    this.#lastEvent.set(key, at);
    if (this.#lastEvent.size > MAX_PENDING_ANNOTATIONS) this.#lastEvent.clear();
    if (this.#events.length >= MAX_PENDING_EVENTS) this.#events.shift();
    const nodeName = this.deps.settings.nodeName;
    this.#events.push({
      kind: 'event',
      action: reason,
      at,
      namespace: pod.namespace,
      build: () =>
        awsNodeWarningEvent({
          reason,
          action: reason,
          note,
          pod,
          nodeName,
          nowMs: at,
          serial: this.#serial++,
        }),
    });
    this.#kick();
  }

  /**
   * Runs `fn` with the API client while connected; otherwise throws `KubeCallError` `Unreachable` (callers
   * on the allocation path treat that as "try again later", never on the pod path).
   */
  async call<T>(fn: (api: KubeApi) => Promise<T>): Promise<T> {
    const api = this.#api;
    if (api === undefined || this.#state !== 'connected') {
      throw new KubeCallError(
        'Unreachable',
        0,
        `Kubernetes API ${this.#state === 'off' ? 'not used' : this.#state}`,
      );
    }
    return fn(api);
  }

  /**
   * Sets a CNINode feature by name (e.g. `CustomNetworking=<ENIConfig>` once the node's ENIConfig is known);
   * the CNINode is patched in the background when it changed.
   */
  setFeature(feature: CniNodeFeature): void {
    const i = this.#features.findIndex((f) => f.name === feature.name);
    const same = i >= 0 && (this.#features[i]!.value ?? '') === (feature.value ?? '');
    if (same) return;
    if (i >= 0) this.#features[i] = feature;
    else this.#features.push(feature);
    this.#featuresVersion++;
    this.#cniNodeReady = false;
    this.#kick();
  }

  /** After a successful ADD: annotate the pod (ANNOTATE_POD_IP). */
  podAdded(pod: { namespace: string; name: string }, ip: string): void {
    if (!this.deps.settings.annotatePodIp || this.#state === 'off' || !pod.name) return;
    this.#queueAnnotation({ kind: 'annotate', key: `${pod.namespace}/${pod.name}`, pod, ip });
  }

  /** After a DEL: clear the annotation if it still names the released address (ANNOTATE_POD_IP). */
  podDeleted(pod: { namespace: string; name: string }, ip: string): void {
    if (!this.deps.settings.annotatePodIp || this.#state === 'off' || !pod.name) return;
    this.#queueAnnotation({
      kind: 'annotate',
      key: `${pod.namespace}/${pod.name}`,
      pod,
      ip: '',
      released: ip,
    });
  }

  #queueAnnotation(job: Job & { kind: 'annotate' }): void {
    this.#annotations.delete(job.key);
    if (this.#annotations.size >= MAX_PENDING_ANNOTATIONS) {
      const oldest = this.#annotations.keys().next().value as string;
      this.#annotations.delete(oldest);
      this.deps.log.warn('pod IP annotation dropped: too many waiting for the Kubernetes API', {
        pod: oldest,
      });
    }
    this.#annotations.set(job.key, job);
    this.#kick();
  }

  #kick(): void {
    this.#wake?.();
  }

  /**
   * Stops reconnecting and drops what is queued. Waits at most a second for a call in flight (a daemon's stop
   * must not hang on an API server that stopped answering).
   */
  async stop(): Promise<void> {
    this.#stop.abort();
    this.#kick();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.#loop, new Promise<void>((r) => (timer = setTimeout(r, 1000)))]);
    clearTimeout(timer);
  }

  async #run(target: InClusterTarget): Promise<void> {
    const { log } = this.deps;
    const signal = this.#stop.signal;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (this.#state !== 'connected') await this.#connect(target);
        await this.#drain();
        failures = 0;
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
          signal.addEventListener('abort', () => resolve(), { once: true });
          // Work queued (or stop asked) while draining: no wake-up will come for it, go round again now.
          if (signal.aborted || this.#annotations.size + this.#events.length > 0 || !this.#cniNodeReady)
            resolve();
        });
        this.#wake = undefined;
        if (!this.#cniNodeReady && this.#cniNodeFailed && this.#state === 'connected')
          await this.deps.sleep(5000, signal);
      } catch (e) {
        if (signal.aborted) return;
        if (!isKubeCallError(e, 'Unreachable')) throw e;
        if (this.#state !== 'unreachable')
          log.warn(
            'Kubernetes API unreachable; pod networking is unaffected, these wait for it: CNINode features, MissingIAMPermissions events, pod IP annotations',
            {
              server: target.server,
              error: e.message,
              pending: this.status().pending,
            },
          );
        this.#state = 'unreachable';
        this.#api = undefined;
        await this.deps.sleep(backoffDelay(KUBE_RECONNECT_BACKOFF, failures++, this.deps.random), signal);
      }
    }
  }

  async #connect(target: InClusterTarget): Promise<void> {
    const { settings, log } = this.deps;
    const api = this.#api ?? (await this.deps.connect(target));
    this.#api = api;
    const node = await api.getNode(settings.nodeName).catch((e: unknown) => {
      if (isKubeCallError(e, 'NotFound', 'Forbidden', 'Unauthorized')) {
        log.warn('cannot read this node from the Kubernetes API', {
          node: settings.nodeName,
          error: (e as Error).message,
        });
        return undefined;
      }
      throw e;
    });
    this.#nodeUid = node?.metadata?.uid;
    if (settings.podName !== '') {
      const pod = await api.getPod(settings.podNamespace, settings.podName).catch((e: unknown) => {
        if (isKubeCallError(e, 'Unreachable')) throw e;
        return undefined;
      });
      this.#podUid = pod?.metadata?.uid;
    }
    const wasUnreachable = this.#state === 'unreachable';
    this.#state = 'connected';
    log.info(wasUnreachable ? 'Kubernetes API reachable again' : 'Kubernetes API reachable', {
      server: target.server,
      node: settings.nodeName,
      nodeFound: node !== undefined,
      pending: this.status().pending,
    });
  }

  async #drain(): Promise<void> {
    const api = this.#api!;
    const { settings, log } = this.deps;
    if (!this.#cniNodeReady) {
      try {
        const features = [...this.#features];
        const version = this.#featuresVersion;
        const outcome = await ensureCniNode(api, settings.nodeName, this.#nodeUid, features);
        this.#cniNodeFailed = false;
        // A feature set while this write was in flight still needs its own.
        this.#cniNodeReady = version === this.#featuresVersion;
        log.info('CNINode ready', {
          node: settings.nodeName,
          outcome,
          features: features.map((f) => (f.value ? `${f.name}=${f.value}` : f.name)),
        });
      } catch (e) {
        if (isKubeCallError(e, 'Unreachable')) throw e;
        this.#cniNodeFailed = true;
        log.warn('CNINode could not be written; retrying', {
          node: settings.nodeName,
          error: String((e as Error).message),
        });
      }
    }
    while (this.#events.length > 0) {
      const job = this.#events[0]!;
      try {
        const pod = {
          namespace: settings.podNamespace,
          name: settings.podName || `aws-node-${settings.nodeName}`,
          ...(this.#podUid ? { uid: this.#podUid } : {}),
        };
        if (job.build !== undefined) {
          await api.createEvent(job.namespace ?? settings.podNamespace, job.build(pod));
          log.warn('Warning Event emitted', { reason: job.action });
        } else {
          await api.createEvent(
            settings.podNamespace,
            missingIamPermissionsEvent({
              action: job.action,
              pod,
              nodeName: settings.nodeName,
              nowMs: job.at,
            }),
          );
          log.warn('EC2 refused a call for missing IAM permissions; Event emitted', {
            action: `ec2:${job.action}`,
          });
        }
      } catch (e) {
        if (isKubeCallError(e, 'Unreachable')) throw e;
        log.warn('Warning Event not written', {
          action: job.action,
          error: String((e as Error).message),
        });
      }
      this.#events.shift();
    }
    for (const [key, job] of [...this.#annotations]) {
      try {
        if (job.released === undefined) await setPodIpAnnotation(api, job.pod, job.ip);
        else await clearPodIpAnnotation(api, job.pod, job.released);
      } catch (e) {
        if (isKubeCallError(e, 'Unreachable')) throw e;
        log.warn('pod IP annotation not written', { pod: key, error: String((e as Error).message) });
      }
      if (this.#annotations.get(key) === job) this.#annotations.delete(key);
    }
  }
}
