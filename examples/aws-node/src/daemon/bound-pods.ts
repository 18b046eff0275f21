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
      /**
       * Its controller (the owner reference with `controller: true`) is a `batch/v1` Job: one pod of a fan-out
       * its Job creates together (a CronJob's pods are its Jobs').
       */
      readonly job: boolean;
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
 * Whether `metadata.ownerReferences` names a `batch/v1` Job as the pod's controller; a string saying what is
 * wrong when the list cannot be read (not a list, an entry not an object, `apiVersion` or `kind` not a string,
 * `controller` not a boolean, or more than one controller: the API server accepts none of these). Absent or
 * `null`: no owner. An owner without `controller: true` (e.g. one a user added) is not the controller.
 */
function controlledByJob(refs: unknown): boolean | string {
  if (refs === undefined || refs === null) return false;
  if (!Array.isArray(refs)) return 'metadata.ownerReferences is not a list';
  let job: boolean | undefined;
  for (const r of refs) {
    const ref = jsonObject(r);
    if (ref === undefined) return 'an owner reference is not an object';
    const { apiVersion, kind, controller } = ref;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string')
      return "an owner reference's apiVersion or kind is not a string";
    if (controller !== undefined && typeof controller !== 'boolean')
      return "an owner reference's controller is not a boolean";
    if (controller !== true) continue;
    if (job !== undefined) return 'more than one owner reference is the controller';
    job = kind === 'Job' && apiVersion === 'batch/v1';
  }
  return job ?? false;
}

/**
 * Whether a pod object from the API is one this node's pool will serve soon: bound to `nodeName`, not host
 * network, not terminating (`deletionTimestamp`), phase `Pending`, and not a branch-ENI pod (security groups for
 * pods: its first container's limits ask for `vpc.amazonaws.com/pod-eni`; its address is the branch ENI's. The
 * pod-eni annotation alone does not make one: such a pod gets a pool address, ADR 0039). It also says whether
 * the pod's controller is a `batch/v1` Job (`metadata.ownerReferences`). A field of the wrong type makes the whole
 * object unreadable: it is not counted (fail closed).
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
  const job = controlledByJob(meta.ownerReferences);
  if (typeof job === 'string') return bad(job);
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
  const seen = { ok: true as const, key, uid: typeof uid === 'string' ? uid : '', job };
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

/** What {@link BoundPods.counts} gives: the pool's `observation.bound` and `observation.boundJobPods`. */
export interface BoundCounts {
  /** Pods bound to this node that have not asked for an address yet, and hold none. */
  readonly pods: number;
  /** Of {@link BoundCounts.pods}, those whose controller is a `batch/v1` Job. */
  readonly jobPods: number;
}

/** No pod bound. */
const NONE: BoundCounts = { pods: 0, jobPods: 0 };

/** What {@link BoundPods} needs. */
export interface BoundPodsDeps {
  /** This node's name. */
  readonly nodeName: string;
  /** `namespace/name` of every pod holding an address in the datastore now. */
  readonly holding: () => ReadonlySet<string>;
  /** Called with the new counts when they changed because of the API (an event, a relist, the API lost). */
  readonly onChange: (counts: BoundCounts) => void;
  readonly log: Logger;
}

/**
 * The pods of this node awaiting a pool address, kept from the pod watch ({@link PodWatchSink}): each object
 * is judged once, when it arrives ({@link podVerdict}; an unreadable one is logged at debug level and not
 * counted). {@link BoundPods.count} leaves out pods that already hold an address in the datastore and pods
 * whose ADD has been asked for ({@link BoundPods.asked}: they are the pool's `waiting`, not `bound`);
 * {@link BoundPods.counts} also says how many of those a Job controls.
 */
export class BoundPods implements PodWatchSink {
  /** `namespace/name` → uid and whether a Job controls it, for the pods that await an address. */
  #awaiting = new Map<string, { readonly uid: string; readonly job: boolean }>();
  /** `namespace/name` → uid (as the watch knew it then) of pods whose ADD has come. */
  #asked = new Map<string, string>();
  #last: BoundCounts = NONE;

  /** @param deps - node, datastore view, change hook and logger */
  constructor(private readonly deps: BoundPodsDeps) {}

  /** Pods bound to this node that have not asked for an address yet, and hold none. */
  count(): number {
    return this.counts().pods;
  }

  /** {@link BoundPods.count} and how many of those pods a Job controls, in one pass. */
  counts(): BoundCounts {
    if (this.#awaiting.size === 0) return NONE;
    const holding = this.deps.holding();
    let pods = 0;
    let jobPods = 0;
    for (const [key, pod] of this.#awaiting)
      if (!holding.has(key) && !this.#asked.has(key)) {
        pods += 1;
        if (pod.job) jobPods += 1;
      }
    return { pods, jobPods };
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
    this.#asked.set(key, this.#awaiting.get(key)?.uid ?? '');
    // ADDs of pods the watch never showed (the API is away): forget them rather than grow without bound.
    if (this.#asked.size > MAX_ASKED)
      for (const k of this.#asked.keys()) if (!this.#awaiting.has(k)) this.#asked.delete(k);
    this.#last = this.counts();
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
    if (v.awaits) this.#awaiting.set(v.key, { uid: v.uid, job: v.job });
    else this.#awaiting.delete(v.key);
    return v;
  }

  #ignored(problem: string): void {
    this.deps.log.debug('pod object from the API ignored: not counted as bound', {
      node: this.deps.nodeName,
      problem,
    });
  }

  /** Tells the daemon when the counts moved (one wake per change, not per event). */
  #changed(): void {
    const n = this.counts();
    if (n.pods === this.#last.pods && n.jobPods === this.#last.jobPods) return;
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
