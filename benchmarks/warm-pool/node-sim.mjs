// One node, replayed: pod add/del events against the real @vpc-cni-kit/datastore and a warm-pool policy (the
// static `decide` or the adaptive `decideAdaptive`) with a seeded EC2 latency model, on a virtual clock.
// See README.md for the model. Deterministic for a given trace, policy and seed.
import { Datastore, isDatastoreError, nullCheckpointer } from '@vpc-cni-kit/datastore';
import { DEFAULT_TARGETS, decide, decideAdaptive, initialAdaptiveState } from '@vpc-cni-kit/warm-pool';
import { prng, Queue } from './lib.mjs';
import { admittedPods, podWatchLead } from './pod-watch.mjs';

/** m5.large: 3 ENIs × 10 IPv4 addresses; max pods 29 (eni-max-pods.txt) or 110 with prefix delegation. */
export const INSTANCE = { maxEnis: 3, ipv4PerEni: 10 };
/** Max pods on the simulated node, without and with prefix delegation. */
export const MAX_PODS = { ip: 29, prefix: 110 };

/** The reference's default: WARM_ENI_TARGET=1. */
export const DEFAULT_POLICY = { name: 'default (WARM_ENI_TARGET=1)', targets: { ...DEFAULT_TARGETS } };
/** The adaptive policy with its default settings, on /32 secondary addresses. */
export const ADAPTIVE_POLICY = { name: 'adaptive', targets: { ...DEFAULT_TARGETS }, adaptive: {} };
/** The adaptive policy with prefix delegation (no static warm target: WARM_POOL_POLICY=adaptive allows it). */
export const ADAPTIVE_PD_POLICY = {
  name: 'adaptive (PD)',
  targets: { ...DEFAULT_TARGETS, prefixDelegation: true },
  adaptive: {},
};

/** The reference's pool loop: a check every 5 s (2.5 s + 2.5 s), one action per pass. */
export const LOOP_MS = 5_000;
/** The node comes up this long before the trace starts, so the pool is warm for the first pod. */
const WARMUP_MS = 60_000;
/** Host-network pods (kube-proxy, aws-node) that count against max pods but need no address. */
const HOST_NETWORK_PODS = 2;
/** A pod whose ADD failed is retried this often (kubelet retries the sandbox). */
const RETRY_MS = 1_000;
/** examples/aws-node's PoolLoop: a wake (ADD or DEL) runs a pass this much later; a pass ticks up to 10 times. */
const WAKE_DELAY_MS = 10;
const TICKS_PER_PASS = 10;

/**
 * EC2 latency model (ms), seeded. Assign/unassign ≈ 0.5 s (one `AssignPrivateIpAddresses` sample: 510 ms,
 * aws/amazon-vpc-cni-k8s#3480); ENI create + attach until usable 1–10 s ("can take up to 10 seconds",
 * docs/eni-and-ip-target.md).
 */
export function latencyModel(rand) {
  const between = (lo, hi) => lo + (hi - lo) * rand();
  return {
    assign: () => between(300, 800),
    unassign: () => between(300, 800),
    createAttach: () => between(1_000, 10_000),
    detachDelete: () => between(1_000, 3_000),
  };
}

/**
 * Calls a policy the way a pool loop does: the static `decide`, or `decideAdaptive` with its state and what the
 * node observed since the last call (`seen`: arrivals, departures, lead times, throttled calls; the caller
 * adds to it).
 */
export function policyDriver(policy, limits) {
  let state = initialAdaptiveState;
  const driver = {
    seen: { arrivals: 0, departures: 0, leadTimesMs: [], throttled: 0 },
    reasons: {},
    decide(stats, timing, waiting, bound = 0, boundJobPods = 0) {
      if (!policy.adaptive) return decide({ stats, targets: policy.targets, limits, timing });
      const r = decideAdaptive({
        stats,
        targets: policy.targets,
        limits,
        timing,
        observation: {
          ...driver.seen,
          waiting,
          ...(bound > 0 ? { bound } : {}),
          ...(boundJobPods > 0 ? { boundJobPods } : {}),
        },
        state,
        settings: policy.adaptive,
      });
      state = r.state;
      driver.last = r;
      driver.seen = { arrivals: 0, departures: 0, leadTimesMs: [], throttled: 0 };
      driver.reasons[r.why.code] = (driver.reasons[r.why.code] ?? 0) + 1;
      return r.decision;
    },
  };
  return driver;
}

/**
 * Assigns `pod` an address on `ds`: true, or false when none is ready (`NoAvailableAddress`: the simulated kubelet
 * retries the pod later). Pods waiting for addresses retry every second, so most calls fail, and capturing the
 * error's stack trace was most of their cost: the datastore's error is built without one. Any other error is
 * thrown again with a stack (from here) and the datastore's as its cause.
 */
export function assignPod(ds, pod) {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    ds.assign({ networkName: 'aws-cni', containerID: pod, ifName: 'eth0' });
    return true;
  } catch (e) {
    if (isDatastoreError(e, 'NoAvailableAddress')) return false;
    Error.stackTraceLimit = limit;
    throw new Error(`assign ${pod}: ${e?.message ?? e}`, { cause: e });
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** The policy's max pods: 110 with prefix delegation, else 29. */
export function maxPodsOf(policy) {
  return policy.targets.prefixDelegation ? MAX_PODS.prefix : MAX_PODS.ip;
}

/**
 * Replays `events` under `policy` and returns the metrics.
 * @param events parsed trace events ({ time (s), event: 'add'|'del', pod })
 * @param policy { name, targets, adaptive? } — `adaptive` (settings object) selects decideAdaptive
 * @param seed EC2 latency seed, and the pod watch's (its leads are a stream of their own, mixed from it)
 * @param opts { loop: 'reference' | 'daemon', timeline: boolean, podWatch: boolean, ownerHint: boolean,
 *   latencySeed: number } — `latencySeed` (default `seed`): the EC2 latency model's seed alone, the pod watch's
 *   leads staying those of `seed` (latency-draws.mjs re-deals the latency of a trace this way).
 *   `podWatch`: the daemon watches pods bound to its node and tells an adaptive policy how many have not asked yet
 *   (`bound`); static settings never use it. `ownerHint` (with `podWatch`; an upper bound, owner-hint.mjs): when
 *   the daemon first sees a pod of an owner (an add event's `owner`) bound, it also counts in `bound` that owner's
 *   pods it has neither seen bound nor seen ask yet, at most the room left on the node
 */
export function simulate(events, policy, seed = 42, opts = {}) {
  const loopModel = opts.loop ?? 'daemon';
  const lat = latencyModel(prng(opts.latencySeed ?? seed));
  const maxPods = maxPodsOf(policy);
  let now = -WARMUP_MS;
  const clock = { now: () => now };
  const ds = new Datastore({
    clock,
    checkpointer: nullCheckpointer,
    prefixDelegation: policy.targets.prefixDelegation,
  });
  const limits = { ...INSTANCE, maxPods };
  let nextIp = (10 << 24) + 16;
  let nextPrefix = (10 << 24) + (1 << 16);
  const ip = (v) => `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
  const newCidr = (unit) => {
    if (unit === 'prefix') {
      const c = `${ip(nextPrefix)}/28`;
      nextPrefix += 16;
      return c;
    }
    return `${ip(nextIp++)}/32`;
  };
  let nextDevice = 1;
  ds.addEni({ id: 'eni-0', deviceNumber: 0, routeTableId: 254, subnetId: 'subnet-a', isPrimary: true });

  const q = new Queue();
  for (const e of events) q.push(e.time * 1000, e.event, e.pod);
  // The pod watch: each pod the scheduler binds here is seen bound some hundreds of ms before its ADD.
  const watching = opts.podWatch === true && policy.adaptive !== undefined;
  const boundNow = new Set();
  if (watching) {
    const lead = podWatchLead(seed);
    const admitted = admittedPods(events, maxPods - HOST_NETWORK_PODS);
    for (const e of events) {
      if (e.event !== 'add' || !admitted.has(e.pod)) continue;
      const ahead = lead();
      if (ahead !== undefined) q.push(e.time * 1000 - ahead, 'bound', e.pod);
    }
  }
  // The owner hint: per owner, its pods neither seen bound nor added yet; `hinted` sums them over the owners
  // revealed (one of their pods seen bound).
  const hinting = watching && opts.ownerHint === true;
  // Pods a Job controls (a trace event's `owner` is a Job: a batch Job, a CronJob's run, burst-100's fan-out).
  const jobOwned = new Set();
  if (watching) for (const e of events) if (e.event === 'add' && e.owner !== undefined) jobOwned.add(e.pod);
  const ownerOfPod = new Map();
  const unseen = new Map();
  const revealed = new Set();
  let hinted = 0;
  if (hinting)
    for (const e of events) {
      if (e.event !== 'add' || e.owner === undefined) continue;
      ownerOfPod.set(e.pod, e.owner);
      unseen.set(e.owner, (unseen.get(e.owner) ?? 0) + 1);
    }
  /** The daemon has seen `pod` (bound or asking): it is no longer among its owner's pods to come. */
  const seenPod = (pod) => {
    const owner = ownerOfPod.get(pod);
    if (owner === undefined) return;
    ownerOfPod.delete(pod);
    unseen.set(owner, unseen.get(owner) - 1);
    if (revealed.has(owner)) hinted -= 1;
  };
  const end = Math.max(0, ...events.map((e) => e.time * 1000)) + 60_000;
  q.push(end, 'end');

  // Pool-loop scheduling: one pending pass at a time (a later request for an earlier time replaces it).
  let loopGen = 0;
  let loopAt = Number.POSITIVE_INFINITY;
  let busyUntil = Number.NEGATIVE_INFINITY;
  let ticksInPass = 0;
  let wakeDuringPass = false;
  const scheduleLoop = (at) => {
    if (at >= loopAt) return;
    loopGen += 1;
    loopAt = at;
    q.push(at, 'loop', loopGen);
  };
  const wake = () => {
    if (loopModel !== 'daemon') return;
    if (now < busyUntil) wakeDuringPass = true;
    else scheduleLoop(now + WAKE_DELAY_MS);
  };
  scheduleLoop(-WARMUP_MS);

  const calls = {
    AssignPrivateIpAddresses: 0,
    UnassignPrivateIpAddresses: 0,
    CreateNetworkInterface: 0,
    AttachNetworkInterface: 0,
    DetachNetworkInterface: 0,
    DeleteNetworkInterface: 0,
  };
  const pending = new Map();
  const running = new Set();
  const rejected = new Set();
  let overMaxPods = 0;
  const waits = [];
  let coldStarts = 0;
  const coldAt = [];
  let served = 0;
  let lastShrinkAt;
  let retryArmed = false;
  const driver = policyDriver(policy, limits);
  let idleArea = 0;
  let peakIdle = 0;
  let lastSample = 0;
  let idleNow = 0;
  const timeline = opts.timeline ? [] : undefined;
  const sample = () => {
    if (now > 0) {
      const from = Math.max(lastSample, 0);
      idleArea += idleNow * (now - from);
      lastSample = now;
    }
    const s = ds.stats();
    idleNow = s.totalIPs - s.assignedIPs;
    if (now >= 0) peakIdle = Math.max(peakIdle, idleNow);
    if (timeline && now >= 0) {
      const point = [now / 1000, s.assignedIPs, idleNow - s.cooldownIPs, s.cooldownIPs, pending.size];
      const prev = timeline.at(-1);
      if (prev && prev[0] === point[0]) timeline[timeline.length - 1] = point;
      else if (!prev || prev.slice(1).some((v, i) => v !== point[i + 1])) timeline.push(point);
    }
  };

  const tryAssign = (pod) => {
    if (!assignPod(ds, pod)) return false;
    running.add(pod);
    driver.seen.arrivals += 1;
    return true;
  };
  const drainPending = () => {
    for (const [pod, at] of pending) {
      if (running.size >= maxPods) break;
      if (!tryAssign(pod)) break;
      pending.delete(pod);
      waits.push(now - at);
    }
    if (pending.size > 0 && !retryArmed) {
      retryArmed = true;
      q.push(now + RETRY_MS, 'retry');
    }
  };

  /** Pods seen bound, and with the owner hint their owners' pods still to come, at most what the node can hold. */
  const boundCount = () => {
    if (hinted === 0) return boundNow.size;
    const room = maxPods - HOST_NETWORK_PODS - running.size - pending.size - boundNow.size;
    return boundNow.size + Math.max(0, Math.min(hinted, room));
  };
  const decideNow = () => {
    const timing = lastShrinkAt === undefined ? { now } : { now, lastShrinkAt };
    const bound = boundCount();
    // The watch sees each bound pod's controller: of the pods counted in `bound`, those of a Job.
    let jobPods = 0;
    for (const p of boundNow) if (jobOwned.has(p)) jobPods += 1;
    const d = driver.decide(ds.stats(), timing, pending.size, bound, Math.min(jobPods, bound));
    opts.onDecision?.({
      now,
      bound,
      waiting: pending.size,
      stats: ds.stats(),
      decision: d,
      adaptive: driver.last,
    });
    return d;
  };

  while (q.size > 0) {
    const ev = q.pop();
    now = ev.at;
    switch (ev.kind) {
      case 'add': {
        boundNow.delete(ev.data);
        seenPod(ev.data);
        if (running.size + pending.size >= maxPods - HOST_NETWORK_PODS) {
          rejected.add(ev.data);
          overMaxPods += 1;
          break;
        }
        served += 1;
        if (pending.size === 0 && running.size < maxPods && tryAssign(ev.data)) {
          waits.push(0);
        } else {
          coldStarts += 1;
          coldAt.push(now / 1000);
          pending.set(ev.data, now);
          drainPending();
        }
        wake();
        break;
      }
      case 'del': {
        if (rejected.delete(ev.data)) break;
        if (pending.delete(ev.data)) break;
        ds.unassign({ networkName: 'aws-cni', containerID: ev.data, ifName: 'eth0' });
        running.delete(ev.data);
        driver.seen.departures += 1;
        drainPending();
        wake();
        break;
      }
      case 'bound': {
        boundNow.add(ev.data);
        const owner = ownerOfPod.get(ev.data);
        seenPod(ev.data);
        if (owner !== undefined && !revealed.has(owner)) {
          revealed.add(owner);
          hinted += unseen.get(owner);
        }
        wake();
        break;
      }
      case 'retry':
        retryArmed = false;
        drainPending();
        break;
      case 'loop': {
        if (ev.data !== loopGen) break; // superseded
        loopAt = Number.POSITIVE_INFINITY;
        const d = decideNow();
        let busy = 0;
        if (d.kind === 'assign') {
          calls.AssignPrivateIpAddresses += 1;
          busy = lat.assign();
          q.push(now + busy, 'assigned', { eniId: d.eniId, unit: d.unit, count: d.count, lead: busy });
        } else if (d.kind === 'create-eni') {
          calls.CreateNetworkInterface += 1;
          calls.AttachNetworkInterface += 1;
          busy = lat.createAttach();
          q.push(now + busy, 'attached', { unit: d.unit, count: d.count, lead: busy });
        } else if (d.kind === 'release') {
          for (const c of d.cidrs) ds.removeCidr(c.eniId, c.cidr);
          calls.UnassignPrivateIpAddresses += new Set(d.cidrs.map((c) => c.eniId)).size;
          lastShrinkAt = now;
          busy = lat.unassign();
        } else if (d.kind === 'free-eni') {
          ds.removeEni(d.eniId);
          calls.DetachNetworkInterface += 1;
          calls.DeleteNetworkInterface += 1;
          busy = lat.detachDelete();
        }
        busyUntil = now + busy;
        if (loopModel === 'reference') {
          scheduleLoop(now + busy + LOOP_MS);
        } else {
          // examples/aws-node's PoolLoop: keep ticking while there is something to do (≤ 10 per pass);
          // then wait for the interval, or run again soon if a wake arrived during the pass.
          ticksInPass = d.kind === 'none' ? 0 : ticksInPass + 1;
          if (d.kind !== 'none' && ticksInPass < TICKS_PER_PASS) scheduleLoop(now + busy);
          else {
            ticksInPass = 0;
            scheduleLoop(now + busy + (wakeDuringPass ? WAKE_DELAY_MS : LOOP_MS));
            wakeDuringPass = false;
          }
        }
        break;
      }
      case 'assigned': {
        for (let i = 0; i < ev.data.count; i++) ds.addCidr(ev.data.eniId, newCidr(ev.data.unit));
        driver.seen.leadTimesMs.push(ev.data.lead);
        drainPending();
        break;
      }
      case 'attached': {
        const id = `eni-${nextDevice}`;
        ds.addEni({ id, deviceNumber: nextDevice, routeTableId: nextDevice + 1, subnetId: 'subnet-a' });
        nextDevice += 1;
        for (let i = 0; i < ev.data.count; i++) ds.addCidr(id, newCidr(ev.data.unit));
        driver.seen.leadTimesMs.push(ev.data.lead);
        drainPending();
        break;
      }
      case 'end':
        break;
    }
    sample();
    if (ev.kind === 'end') break;
  }
  const cold = waits.filter((w) => w > 0).sort((a, b) => a - b);
  const pct = (p) => (cold.length === 0 ? 0 : cold[Math.min(cold.length - 1, Math.floor(p * cold.length))]);
  const mutating = Object.values(calls).reduce((a, b) => a + b, 0);
  // Every second a pod waited for its address, pods still waiting at the end included (until the end).
  let waited = waits.reduce((a, b) => a + b, 0);
  for (const at of pending.values()) waited += end - at;
  return {
    pods: served,
    overMaxPods,
    coldStarts,
    coldAtS: coldAt,
    unserved: pending.size,
    coldWaitMeanS: cold.length === 0 ? 0 : cold.reduce((a, b) => a + b, 0) / cold.length / 1000,
    coldWaitP50S: pct(0.5) / 1000,
    coldWaitMaxS: (cold.at(-1) ?? 0) / 1000,
    waitedPodS: waited / 1000,
    avgIdle: idleArea / end,
    idleAddressHours: idleArea / 3_600_000,
    peakIdle,
    ec2Mutating: mutating,
    calls,
    enisAtEnd: ds.eniIds().length,
    durationS: end / 1000,
    ...(policy.adaptive ? { reasons: driver.reasons } : {}),
    ...(timeline ? { timeline } : {}),
  };
}
