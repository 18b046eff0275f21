import type { KubeObject } from './resource-type.js';
import { expired } from './status.js';

/** The kind of a change, as watch events name it. */
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One stored change, kept for watches that resume from a resourceVersion. */
export interface Change {
  /** What happened. */
  readonly type: ChangeType;
  /** Storage key of the resource (`<group>/<plural>`). */
  readonly storageKey: string;
  /** The object after the change (for DELETED: the last state, carrying the deletion's resourceVersion). */
  readonly object: KubeObject;
  /** The object before the change (undefined for ADDED). */
  readonly previous: KubeObject | undefined;
  /** The change's resourceVersion. */
  readonly rv: number;
}

/** A store snapshot (plain JSON). */
export interface StoreSnapshot {
  /** Last resourceVersion handed out. */
  readonly resourceVersion: number;
  /** Objects by storage key, in storage form. */
  readonly objects: Readonly<Record<string, readonly KubeObject[]>>;
}

/** Store options. */
export interface StoreOptions {
  /** How many changes are kept for watch resumption (older resourceVersions get 410 Expired). */
  readonly historySize?: number;
}

function keyOf(obj: KubeObject): string {
  const m = obj.metadata ?? {};
  return `${(m.namespace as string | undefined) ?? ''}/${m.name as string}`;
}

/**
 * The simulator's etcd: objects by storage key and `namespace/name`, one cluster-wide resourceVersion counter,
 * and a bounded history of changes. Every write is a whole-object replace done synchronously, so a request
 * either applies completely or not at all.
 */
export class ObjectStore {
  #rv: number;
  #objects = new Map<string, Map<string, KubeObject>>();
  #history: Change[] = [];
  #historySize: number;
  /** Lowest resourceVersion a watch may still resume from. */
  #oldest: number;
  #listeners = new Set<(c: Change) => void>();

  /** @param options - history size */
  constructor(options: StoreOptions = {}) {
    this.#historySize = options.historySize ?? 2000;
    this.#rv = 1000;
    this.#oldest = this.#rv;
  }

  /** The current (latest) resourceVersion. */
  get resourceVersion(): number {
    return this.#rv;
  }

  /** The object at `namespace/name`, or undefined (returns the stored instance: do not mutate). */
  get(storageKey: string, namespace: string, name: string): KubeObject | undefined {
    return this.#objects.get(storageKey)?.get(`${namespace}/${name}`);
  }

  /** Objects of a storage key, optionally one namespace, sorted by `namespace/name`. */
  list(storageKey: string, namespace?: string): KubeObject[] {
    const all = [...(this.#objects.get(storageKey)?.entries() ?? [])];
    return all
      .filter(([k]) => namespace === undefined || k.startsWith(`${namespace}/`))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, v]) => v);
  }

  /** Sort key of an object inside its storage (`namespace/name`). */
  static key(obj: KubeObject): string {
    return keyOf(obj);
  }

  /** Writes `obj` (created or replaced): stamps a new resourceVersion and records the change. */
  put(storageKey: string, obj: KubeObject): KubeObject {
    let bucket = this.#objects.get(storageKey);
    if (!bucket) {
      bucket = new Map();
      this.#objects.set(storageKey, bucket);
    }
    const key = keyOf(obj);
    const previous = bucket.get(key);
    const rv = ++this.#rv;
    const stored: KubeObject = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } };
    bucket.set(key, stored);
    this.#record({ type: previous ? 'MODIFIED' : 'ADDED', storageKey, object: stored, previous, rv });
    return stored;
  }

  /** Removes the object at `obj`'s key; the DELETED change carries a new resourceVersion. */
  remove(storageKey: string, obj: KubeObject): KubeObject | undefined {
    const bucket = this.#objects.get(storageKey);
    const key = keyOf(obj);
    const previous = bucket?.get(key);
    if (!bucket || !previous) return undefined;
    bucket.delete(key);
    const rv = ++this.#rv;
    const gone: KubeObject = { ...previous, metadata: { ...previous.metadata, resourceVersion: String(rv) } };
    this.#record({ type: 'DELETED', storageKey, object: gone, previous, rv });
    return gone;
  }

  #record(change: Change): void {
    this.#history.push(change);
    if (this.#history.length > this.#historySize) {
      const dropped = this.#history.splice(0, this.#history.length - this.#historySize);
      this.#oldest = dropped[dropped.length - 1]!.rv;
    }
    for (const l of this.#listeners) l(change);
  }

  /**
   * Changes after `rv` for one storage key. Throws 410 Expired when `rv` is older than the retained history
   * (the message is the real server's "too old resource version").
   */
  changesSince(storageKey: string, rv: number): Change[] {
    if (rv < this.#oldest) throw expired(`too old resource version: ${rv} (${this.#oldest})`);
    return this.#history.filter((c) => c.rv > rv && c.storageKey === storageKey);
  }

  /** Drops all history: every resourceVersion before now becomes too old to resume from (a compaction). */
  compact(): void {
    this.#history = [];
    this.#oldest = this.#rv;
  }

  /** Subscribes to every change; returns the unsubscribe function. */
  subscribe(listener: (c: Change) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A deep copy of all objects and the resourceVersion counter. */
  snapshot(): StoreSnapshot {
    const objects: Record<string, KubeObject[]> = {};
    for (const [k, bucket] of this.#objects) objects[k] = structuredClone([...bucket.values()]);
    return { resourceVersion: this.#rv, objects };
  }

  /** Replaces all state with a snapshot; the history starts empty at the snapshot's resourceVersion. */
  restore(snap: StoreSnapshot): void {
    this.#objects.clear();
    for (const [k, list] of Object.entries(snap.objects))
      this.#objects.set(k, new Map(list.map((o) => [keyOf(o), structuredClone(o)])));
    this.#rv = snap.resourceVersion;
    this.compact();
  }
}
