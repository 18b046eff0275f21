/**
 * Pods bound to this node that will ask for a pool address and have not yet: the adaptive warm pool's
 * `observation.bound`. Kubelet mounts volumes and starts the sandbox before the runtime calls CNI ADD, so the
 * pool can grow for a pod a few hundred ms before it asks (ADR 0027).
 */
import { podRequestsBranch, type ResourceLimits } from '@vpc-cni-kit/sgp-branch';
import { jsonObject } from '../kube/kube-api.js';
import type { PodWatchSink } from '../kube/pod-watch.js';
import type { CniBackend } from '../rpc/grpc-server.js';
import type { Logger } from './logger.js';

/** What one pod object means for the pool. */
export type PodVerdict =
  | {
      /** The object can be read. */
      readonly ok: true;
      /** `namespace/name`. */
      readonly key: string;
      /** The object's uid (a pod recreated under the same name has another). */
      readonly uid: string;
      /** It will ask this node's pool for an address and has not started (see {@link podVerdict}). */
      readonly awaits: boolean;
      /** Why it does not, when it does not. */
      readonly why?: 'other-node' | 'host-network' | 'terminating' | 'not-pending' | 'branch-eni';
    }
  | {
      /** The object cannot be read: it is not counted. */
      readonly ok: false;
      /** What is wrong with it. */
      readonly problem: string;
    };

const bad = (problem: string): PodVerdict => ({ ok: false, problem });

/**
 * Whether a pod object from the API is one this node's pool will serve soon: bound to `nodeName`, not host
 * network, not terminating (`deletionTimestamp`), phase `Pending`, and not a branch-ENI pod (security groups for
 * pods: its first container's limits ask for `vpc.amazonaws.com/pod-eni`; its address is the branch ENI's. The
 * pod-eni annotation alone does not make one: such a pod gets a pool address, ADR 0039). A field of the wrong type makes the whole object unreadable: it is not
 * counted (fail closed).
 */
export function podVerdict(object: unknown, nodeName: string): PodVerdict {
  const o = jsonObject(object);
  if (o === undefined) return bad('not an object');
  const meta = jsonObject(o.metadata);
  const spec = jsonObject(o.spec);
  const status = o.status === undefined ? {} : jsonObject(o.status);
  if (meta === undefined) return bad('no metadata');
  const { namespace, name, uid } = meta;
  if (typeof namespace !== 'string' || namespace === '' || typeof name !== 'string' || name === '')
    return bad('no namespace or name');
  if (uid !== undefined && typeof uid !== 'string') return bad('uid is not a string');
  if (spec === undefined) return bad('no spec');
  if (status === undefined) return bad('status is not an object');
  if (meta.annotations !== undefined && jsonObject(meta.annotations) === undefined)
    return bad('annotations are not an object');
  const { nodeName: boundTo, hostNetwork, containers } = spec;
  if (typeof boundTo !== 'string') return bad('spec.nodeName is not a string');
  if (hostNetwork !== undefined && typeof hostNetwork !== 'boolean')
    return bad('spec.hostNetwork is not a boolean');
  if (!Array.isArray(containers)) return bad('spec.containers is not a list');
  const limits: (ResourceLimits | undefined)[] = [];
  for (const c of containers) {
    const container = jsonObject(c);
    const resources = container?.resources === undefined ? {} : jsonObject(container.resources);
    if (container === undefined || resources === undefined) return bad('a container is not an object');
    limits.push(jsonObject(resources.limits) as ResourceLimits | undefined);
  }
  if (status.phase !== undefined && typeof status.phase !== 'string')
    return bad('status.phase is not a string');
  const deleting = meta.deletionTimestamp;
  if (deleting !== undefined && deleting !== null && typeof deleting !== 'string')
    return bad('metadata.deletionTimestamp is not a string');
  const key = `${namespace}/${name}`;
  const seen = { ok: true as const, key, uid: typeof uid === 'string' ? uid : '' };
  if (boundTo !== nodeName) return { ...seen, awaits: false, why: 'other-node' };
  if (hostNetwork === true) return { ...seen, awaits: false, why: 'host-network' };
  if (typeof deleting === 'string') return { ...seen, awaits: false, why: 'terminating' };
  // A pod the API has not given a phase yet is Pending.
  if ((status.phase ?? 'Pending') !== 'Pending') return { ...seen, awaits: false, why: 'not-pending' };
  if (podRequestsBranch(limits)) return { ...seen, awaits: false, why: 'branch-eni' };
  return { ...seen, awaits: true };
}

/** Most ADDs remembered for pods the watch has not shown awaiting (more than a node ever runs). */
const MAX_ASKED = 4096;

/** What {@link BoundPods} needs. */
export interface BoundPodsDeps {
  /** This node's name. */
  readonly nodeName: string;
  /** `namespace/name` of every pod holding an address in the datastore now. */
  readonly holding: () => ReadonlySet<string>;
  /** Called with the new count when it changed because of the API (an event, a relist, the API lost). */
  readonly onChange: (count: number) => void;
  readonly log: Logger;
}

/**
 * The pods of this node awaiting a pool address, kept from the pod watch ({@link PodWatchSink}): each object
 * is judged once, when it arrives ({@link podVerdict}; an unreadable one is logged at debug level and not
 * counted). {@link BoundPods.count} leaves out pods that already hold an address in the datastore and pods
 * whose ADD has been asked for ({@link BoundPods.asked}: they are the pool's `waiting`, not `bound`).
 */
export class BoundPods implements PodWatchSink {
  /** `namespace/name` → uid, for the pods that await an address. */
  #awaiting = new Map<string, string>();
  /** `namespace/name` → uid (as the watch knew it then) of pods whose ADD has come. */
  #asked = new Map<string, string>();
  #last = 0;

  /** @param deps - node, datastore view, change hook and logger */
  constructor(private readonly deps: BoundPodsDeps) {}

  /** Pods bound to this node that have not asked for an address yet, and hold none. */
  count(): number {
    if (this.#awaiting.size === 0) return 0;
    const holding = this.deps.holding();
    let n = 0;
    for (const key of this.#awaiting.keys()) if (!holding.has(key) && !this.#asked.has(key)) n += 1;
    return n;
  }

  /** The pods counted now (`namespace/name`), sorted, for introspection. */
  pods(): string[] {
    const holding = this.deps.holding();
    return [...this.#awaiting.keys()].filter((k) => !holding.has(k) && !this.#asked.has(k)).sort();
  }

  /**
   * An ADD for this pod came in: from now on it is not `bound` (until a new pod takes its name). The count
   * drops without a wake: the ADD itself is what the pool reacts to.
   */
  asked(namespace: string, name: string): void {
    if (!name) return;
    const key = `${namespace}/${name}`;
    this.#asked.set(key, this.#awaiting.get(key) ?? '');
    // ADDs of pods the watch never showed (the API is away): forget them rather than grow without bound.
    if (this.#asked.size > MAX_ASKED)
      for (const k of this.#asked.keys()) if (!this.#awaiting.has(k)) this.#asked.delete(k);
    this.#last = this.count();
  }

  reset(items: readonly unknown[]): void {
    const before = this.#awaiting;
    this.#awaiting = new Map();
    const present = new Set<string>();
    for (const item of items) {
      const v = this.#judge(item);
      if (v?.ok) present.add(v.key);
    }
    for (const key of this.#asked.keys()) if (!present.has(key)) this.#asked.delete(key);
    if (before.size > 0 || this.#awaiting.size > 0) this.#changed();
  }

  upsert(object: unknown): void {
    const v = this.#judge(object);
    if (v === undefined) return;
    this.#changed();
  }

  remove(object: unknown): void {
    const v = podVerdict(object, this.deps.nodeName);
    if (!v.ok) {
      this.#ignored(v.problem);
      return;
    }
    this.#awaiting.delete(v.key);
    this.#asked.delete(v.key);
    this.#changed();
  }

  lost(): void {
    this.#awaiting.clear();
    this.#asked.clear();
    this.#changed();
  }

  /** Records `object`'s verdict; `undefined` when it cannot be read (ignored, logged). */
  #judge(object: unknown): (PodVerdict & { ok: true }) | undefined {
    const v = podVerdict(object, this.deps.nodeName);
    if (!v.ok) {
      this.#ignored(v.problem);
      return undefined;
    }
    // A pod recreated under the same name has not asked yet.
    const askedUid = this.#asked.get(v.key);
    if (askedUid !== undefined && askedUid !== '' && askedUid !== v.uid) this.#asked.delete(v.key);
    if (askedUid === '') this.#asked.set(v.key, v.uid);
    if (v.awaits) this.#awaiting.set(v.key, v.uid);
    else this.#awaiting.delete(v.key);
    return v;
  }

  #ignored(problem: string): void {
    this.deps.log.debug('pod object from the API ignored: not counted as bound', {
      node: this.deps.nodeName,
      problem,
    });
  }

  /** Tells the daemon when the count moved (one wake per change, not per event). */
  #changed(): void {
    const n = this.count();
    if (n === this.#last) return;
    this.#last = n;
    this.deps.onChange(n);
  }
}

/**
 * Wraps the CNI backend so each ADD tells `bound` its pod has asked, before the ADD is served (`bound`
 * undefined: the backend as it is).
 */
export function noteAdds(bound: BoundPods | undefined, backend: CniBackend): CniBackend {
  if (bound === undefined) return backend;
  return {
    ...backend,
    addNetwork(req) {
      bound.asked(req.K8S_POD_NAMESPACE, req.K8S_POD_NAME);
      return backend.addNetwork(req);
    },
  };
}
