import type { ObjectApi } from './object-api.js';
import { groupVersion, type KubeObject, type ResourceType } from './resource-type.js';
import type { FieldRequirement, LabelSelector } from './selectors.js';
import { isKubeApiError } from './status.js';
import type { Change } from './store.js';

/** One watch event as sent on the wire. */
export interface WatchEvent {
  /** ADDED, MODIFIED, DELETED, BOOKMARK or ERROR. */
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  /** The object (a Status for ERROR). */
  readonly object: unknown;
}

/** Where a watch writes. */
export interface WatchSink {
  /** Sends one event. */
  send(event: WatchEvent): void;
  /** Ends the stream. */
  close(): void;
}

/** What to watch. */
export interface WatchRequest {
  /** The resource type (its served version decides the objects' apiVersion). */
  readonly type: ResourceType;
  /** Namespace, or undefined for all. */
  readonly namespace: string | undefined;
  /** Label selector. */
  readonly labelSelector?: LabelSelector;
  /** Field selector. */
  readonly fieldSelector?: readonly FieldRequirement[];
  /** Resume point: '' or '0' starts with synthetic ADDED events for what exists. */
  readonly resourceVersion: string;
  /** Whether BOOKMARK events may be sent. */
  readonly allowBookmarks: boolean;
  /** Server-side timeout (ms) after which the stream ends; undefined = never. */
  readonly timeoutMs?: number;
}

/** Timer functions (injected so tests can drive time). */
export interface WatchTimers {
  /** Like setInterval. */
  readonly every: (ms: number, fn: () => void) => () => void;
  /** Like setTimeout. */
  readonly after: (ms: number, fn: () => void) => () => void;
}

/** Default timers on the Node event loop (unref'd so they never keep a process alive). */
export const nodeTimers: WatchTimers = {
  every: (ms, fn) => {
    const h = setInterval(fn, ms);
    h.unref();
    return () => clearInterval(h);
  },
  after: (ms, fn) => {
    const h = setTimeout(fn, ms);
    h.unref();
    return () => clearTimeout(h);
  },
};

/**
 * Fans store changes out to open watches. Each watch filters by namespace and selectors on both the old and the
 * new object, so an object that stops matching is seen as DELETED and one that starts matching as ADDED, as
 * the real watch cache does.
 */
export class WatchHub {
  #open = new Set<{ close: () => void }>();

  /**
   * @param api - object semantics (for version conversion and selector matching)
   * @param timers - timer functions
   * @param bookmarkIntervalMs - how often BOOKMARK events go to watches that allow them
   */
  constructor(
    private readonly api: ObjectApi,
    private readonly timers: WatchTimers = nodeTimers,
    private readonly bookmarkIntervalMs = 5000,
  ) {}

  /** Number of open watches. */
  get size(): number {
    return this.#open.size;
  }

  /** Opens a watch; returns its close function. Errors (410) are sent as an ERROR event, then the stream ends. */
  open(req: WatchRequest, sink: WatchSink): () => void {
    const t = req.type;
    const store = this.api.store;
    const inScope = (obj: KubeObject) =>
      req.namespace === undefined || obj.metadata?.namespace === req.namespace;
    const passes = (obj: KubeObject | undefined) =>
      obj !== undefined &&
      inScope(obj) &&
      this.api.matches(this.api.served(t, obj), req.labelSelector, req.fieldSelector);
    const translate = (c: Change): WatchEvent | undefined => {
      const now = c.type !== 'DELETED' && passes(c.object);
      const before = passes(c.previous);
      if (c.type === 'DELETED')
        return before ? { type: 'DELETED', object: this.api.served(t, c.object) } : undefined;
      if (now && before) return { type: 'MODIFIED', object: this.api.served(t, c.object) };
      if (now) return { type: 'ADDED', object: this.api.served(t, c.object) };
      if (before) return { type: 'DELETED', object: this.api.served(t, c.object) };
      return undefined;
    };
    let closed = false;
    const cleanups: (() => void)[] = [];
    const entry = {
      close: () => {
        if (closed) return;
        closed = true;
        for (const c of cleanups) c();
        this.#open.delete(entry);
        sink.close();
      },
    };
    let backlog: WatchEvent[];
    try {
      if (req.resourceVersion === '' || req.resourceVersion === '0') {
        backlog = store
          .list(t.storageKey, req.namespace)
          .filter((o) => passes(o))
          .map((o) => ({ type: 'ADDED' as const, object: this.api.served(t, o) }));
      } else {
        const rv = Number(req.resourceVersion);
        if (!Number.isInteger(rv) || rv < 0) {
          sink.send({
            type: 'ERROR',
            object: {
              kind: 'Status',
              apiVersion: 'v1',
              metadata: {},
              status: 'Failure',
              message: `invalid resource version: ${req.resourceVersion}`,
              reason: 'BadRequest',
              code: 400,
            },
          });
          sink.close();
          return () => {};
        }
        backlog = store
          .changesSince(t.storageKey, rv)
          .map(translate)
          .filter((e): e is WatchEvent => e !== undefined);
      }
    } catch (e) {
      if (!isKubeApiError(e)) throw e;
      sink.send({ type: 'ERROR', object: e.toStatus() });
      sink.close();
      return () => {};
    }
    this.#open.add(entry);
    cleanups.push(
      store.subscribe((c) => {
        if (c.storageKey !== t.storageKey || closed) return;
        const ev = translate(c);
        if (ev) sink.send(ev);
      }),
    );
    for (const ev of backlog) sink.send(ev);
    if (req.allowBookmarks)
      cleanups.push(
        this.timers.every(this.bookmarkIntervalMs, () =>
          sink.send({
            type: 'BOOKMARK',
            object: {
              kind: t.kind,
              apiVersion: groupVersion(t),
              metadata: { resourceVersion: String(store.resourceVersion) },
            },
          }),
        ),
      );
    if (req.timeoutMs !== undefined) cleanups.push(this.timers.after(req.timeoutMs, entry.close));
    return entry.close;
  }

  /** Ends every open watch (a fault: clients must resume from their last resourceVersion). */
  dropAll(): number {
    const all = [...this.#open];
    for (const w of all) w.close();
    return all.length;
  }
}
