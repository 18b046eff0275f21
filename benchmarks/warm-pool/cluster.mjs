#!/usr/bin/env node
import { Datastore, nullCheckpointer } from '@vpc-cni-kit/datastore';
// The cluster at scale, on a virtual clock: many nodes, each with the real @vpc-cni-kit/datastore and a
// warm-pool policy, sharing ONE account's EC2 request limits (ec2-simulator's TokenBuckets with AWS's
// published per-family limits) and each with examples/aws-node's client-side limiter (eni-manager's
// TokenBucket per action family) and retry back-off (eni-manager's ec2RetryBackoff). No namespaces, no HTTP.
//
//   node benchmarks/warm-pool/cluster.mjs [--markdown] [--quick] [--settings '{"minWarm":2}']
//
// See README.md ("Cluster at scale") for the model and its sources.
import { AWS_RATE_LIMITS, TokenBuckets } from '@vpc-cni-kit/ec2-simulator';
import {
  actionFamily,
  backoffDelay,
  defaultRateLimits,
  ec2RetryBackoff,
  TokenBucket,
} from '@vpc-cni-kit/eni-manager';
import { DEFAULT_TARGETS } from '@vpc-cni-kit/warm-pool';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { formatTable, prng, Queue } from './lib.mjs';
import { assignPod, policyDriver } from './node-sim.mjs';
import { podWatchLead } from './pod-watch.mjs';

/** m5.4xlarge: 8 ENIs × 30 IPv4 addresses; EKS max pods 110 (the ≤ 30 vCPU cap). */
export const CLUSTER_INSTANCE = { maxEnis: 8, ipv4PerEni: 30, maxPods: 110 };

/**
 * The account-side bucket each action draws from ("Request throttling for the Amazon EC2 API",
 * https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html): Assign/Unassign and
 * Create/Delete ENI have their own buckets; Attach/Detach fall in the default mutating bucket.
 */
export const ACCOUNT_FAMILY = {
  AssignPrivateIpAddresses: 'ipv4-assign',
  UnassignPrivateIpAddresses: 'ipv4-assign',
  CreateNetworkInterface: 'eni-lifecycle',
  DeleteNetworkInterface: 'eni-lifecycle',
  AttachNetworkInterface: 'mutating',
  DetachNetworkInterface: 'mutating',
};

/**
 * EC2 latency model, ms (uniform in [lo, hi], seeded). Sources: one AssignPrivateIpAddresses sample of 510 ms
 * (aws/amazon-vpc-cni-k8s#3480); AttachNetworkInterface mean ≈ 0.74 s over 6 calls (DataDog/integrations-core
 * #10143); create + attach until the ENI is usable "can take up to 10 seconds" (the reference's
 * docs/eni-and-ip-target.md), of which the remainder after the two calls is device hot-plug and IMDS.
 */
export const EC2_LATENCY_MS = {
  AssignPrivateIpAddresses: [300, 800],
  UnassignPrivateIpAddresses: [300, 800],
  CreateNetworkInterface: [300, 1_200],
  AttachNetworkInterface: [500, 1_000],
  attachToUsable: [1_000, 8_000],
  DetachNetworkInterface: [500, 1_000],
  DeleteNetworkInterface: [300, 800],
};

/** examples/aws-node's EC2 client: 10 attempts per call (eni-manager `maxAttempts` default). */
const MAX_ATTEMPTS = 10;
const LOOP_MS = 5_000;
const WAKE_DELAY_MS = 10;
const RETRY_MS = 1_000;
const TICKS_PER_PASS = 10;

const POLICIES = {
  static: { name: 'static (WARM_ENI_TARGET=1)', targets: { ...DEFAULT_TARGETS } },
  adaptive: { name: 'adaptive', targets: { ...DEFAULT_TARGETS }, adaptive: {} },
};

/** The rows of the table: the static policy, the adaptive one without and with the pod watch. */
const RUNS = [
  { policy: 'static', podWatch: false },
  { policy: 'adaptive', podWatch: false },
  { policy: 'adaptive', podWatch: true },
];

/**
 * The cluster budget: the share of the account's published limits the nodes draw from together (the rest is
 * left to other callers in the account: controllers, consoles, autoscalers).
 */
export const BUDGET_SHARE = 0.9;

/**
 * One cluster-wide bucket per account family, `BUDGET_SHARE` of AWS's limits, on the simulation's clock: every
 * node takes a token before each EC2 call and waits for one rather than being throttled.
 */
function clusterBudget(clock) {
  const buckets = new Map();
  for (const family of new Set(Object.values(ACCOUNT_FAMILY))) {
    const l = AWS_RATE_LIMITS[family];
    const capacity = Math.max(1, Math.floor(l.burst * BUDGET_SHARE));
    buckets.set(family, {
      bucket: new TokenBucket({ capacity, refillPerSecond: l.refillPerSecond * BUDGET_SHARE }, clock),
      refillPerSecond: l.refillPerSecond * BUDGET_SHARE,
      waiting: [],
      grantAt: Number.POSITIVE_INFINITY,
    });
  }
  return buckets;
}

/**
 * Runs one cluster scenario. `arrivals(node, rand)` gives one node's pod arrival times (ms); `startAt(node,
 * rand)` when its daemon starts (its primary ENI attached, no secondary addresses). `podWatch`: each daemon
 * watches the pods bound to its node (pod-watch.mjs) and tells an adaptive policy how many have not asked yet.
 */
export function runCluster({
  nodes,
  policy,
  arrivals,
  startAt,
  seed = 7,
  endMs = 3_600_000,
  budget = false,
  podWatch = false,
}) {
  const rand = prng(seed);
  const lead = podWatch && policy.adaptive !== undefined ? podWatchLead(seed) : undefined;
  let now = -120_000;
  const clock = { now: () => now, sleep: async () => {} };
  const account = new TokenBuckets(AWS_RATE_LIMITS, clock);
  const shared = budget ? clusterBudget(clock) : undefined;
  const q = new Queue();
  const limits = CLUSTER_INSTANCE;
  const between = ([lo, hi]) => lo + (hi - lo) * rand();
  const counts = { calls: 0, throttled: 0, failedActions: 0, byAction: {}, budgetWaits: 0 };
  const waits = [];
  let cold = 0;
  let pods = 0;
  let lastServedAt = 0;
  let nextIp = 1;
  const ip = () => {
    const v = (10 << 24) + nextIp++;
    return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}/32`;
  };

  const all = [];
  for (let i = 0; i < nodes; i++) {
    const ds = new Datastore({ clock, checkpointer: nullCheckpointer });
    const n = {
      i,
      ds,
      driver: policyDriver(policy, limits),
      pending: new Map(),
      retryArmed: false,
      loopAt: Number.POSITIVE_INFINITY,
      loopGen: 0,
      busy: false,
      wakeDuringPass: false,
      bound: 0,
      ticks: 0,
      nextDevice: 1,
      lastShrinkAt: undefined,
      /** Its free addresses while it has no event (see `freeOf`). */
      free: undefined,
      buckets: new Map(
        Object.entries(defaultRateLimits).map(([family, cfg]) => [family, new TokenBucket(cfg, clock)]),
      ),
    };
    all.push(n);
    const start = startAt(i, rand);
    q.push(start, 'boot', n);
    for (const t of arrivals(i, rand)) {
      const ahead = lead?.();
      if (ahead !== undefined) q.push(t - ahead, 'bound', n);
      q.push(t, 'add', { n, seen: ahead !== undefined });
    }
  }

  const scheduleLoop = (n, at) => {
    if (at >= n.loopAt) return;
    n.loopGen += 1;
    n.loopAt = at;
    q.push(at, 'loop', { n, gen: n.loopGen });
  };
  const wake = (n) => {
    if (!n.booted) return;
    if (n.busy) n.wakeDuringPass = true;
    else scheduleLoop(n, now + WAKE_DELAY_MS);
  };
  const drain = (n) => {
    for (const [pod, at] of n.pending) {
      if (!assignPod(n.ds, pod)) break;
      n.pending.delete(pod);
      n.driver.seen.arrivals += 1;
      waits.push(now - at);
      lastServedAt = Math.max(lastServedAt, now);
    }
    if (n.pending.size > 0 && !n.retryArmed) {
      n.retryArmed = true;
      q.push(now + RETRY_MS, 'retry', n);
    }
  };
  const passDone = (n, acted) => {
    n.busy = false;
    n.ticks = acted ? n.ticks + 1 : 0;
    if (acted && n.ticks < TICKS_PER_PASS) scheduleLoop(n, now);
    else {
      n.ticks = 0;
      scheduleLoop(n, now + (n.wakeDuringPass ? WAKE_DELAY_MS : LOOP_MS));
      n.wakeDuringPass = false;
    }
  };
  /** Runs `steps` (EC2 actions) in order, each through both token buckets with retries; then `done(ok)`. */
  // The cluster budget hands out its tokens in order of need: first the node whose oldest waiting pod has
  // waited longest, then calls for no waiting pod (pre-warming, releases) from the node with the fewest free
  // addresses (the one that will run out first), then in the order asked.
  let seq = 0;
  /**
   * A node's free addresses (total − assigned), from its stats. Kept until the node's next event: only an event
   * of its own changes its datastore, and a grant (the only reader) changes none.
   */
  const freeOf = (n) => {
    if (n.free === undefined) {
      const st = n.ds.stats();
      n.free = st.totalIPs - st.assignedIPs;
    }
    return n.free;
  };
  /** Whether request `a` goes before `b` (free addresses are needed only to order two calls for no waiting pod). */
  const before = (a, b) => {
    const waitingA = a.n.pending.size > 0;
    if (waitingA !== b.n.pending.size > 0) return waitingA;
    const ua = waitingA ? a.n.pending.values().next().value : freeOf(a.n);
    const ub = waitingA ? b.n.pending.values().next().value : freeOf(b.n);
    return ua !== ub ? ua < ub : a.seq < b.seq;
  };
  /** What the cluster budget tells a node: how long a call would wait for its tokens now, ms. */
  const budgetWaits = () => {
    const est = (family) => {
      const f = shared.get(family);
      const short = f.waiting.length + 1 - f.bucket.available();
      return short <= 0 ? 0 : (1000 * short) / f.refillPerSecond;
    };
    return { assign: est('ipv4-assign'), eni: Math.max(est('eni-lifecycle'), est('mutating')) };
  };
  const ask = (family, request) => {
    const f = shared.get(family);
    f.waiting.push({ ...request, seq: seq++ });
    if (f.grantAt === Number.POSITIVE_INFINITY) {
      f.grantAt = now;
      q.push(now, 'grant', family);
    }
  };
  const grant = (family) => {
    const f = shared.get(family);
    f.grantAt = Number.POSITIVE_INFINITY;
    if (f.waiting.length === 0) return;
    const wait = f.bucket.tryTake();
    if (wait === 0) {
      let best = 0;
      for (let k = 1; k < f.waiting.length; k++) if (before(f.waiting[k], f.waiting[best])) best = k;
      const [r] = f.waiting.splice(best, 1);
      q.push(now, 'call', r);
    }
    if (f.waiting.length > 0) {
      f.grantAt = now + wait;
      q.push(f.grantAt, 'grant', family);
    }
  };

  const call = (n, steps, done, i = 0, attempt = 0, granted = false) => {
    if (i === steps.length) return done(true);
    const action = steps[i];
    const wait = n.buckets.get(actionFamily(action)).tryTake();
    if (wait > 0) return q.push(now + wait, 'call', { n, steps, done, i, attempt });
    if (shared && !granted) {
      counts.budgetWaits += 1;
      return ask(ACCOUNT_FAMILY[action], { n, steps, done, i, attempt, granted: true });
    }
    counts.calls += 1;
    counts.byAction[action] = (counts.byAction[action] ?? 0) + 1;
    if (!account.take(ACCOUNT_FAMILY[action])) {
      counts.throttled += 1;
      n.driver.seen.throttled += 1;
      n.buckets.get(actionFamily(action)).drain();
      if (attempt + 1 >= MAX_ATTEMPTS) return done(false);
      const delay = backoffDelay(ec2RetryBackoff, attempt, rand);
      return q.push(now + delay, 'call', { n, steps, done, i, attempt: attempt + 1 });
    }
    const extra = action === 'AttachNetworkInterface' ? between(EC2_LATENCY_MS.attachToUsable) : 0;
    q.push(now + between(EC2_LATENCY_MS[action]) + extra, 'call', { n, steps, done, i: i + 1, attempt: 0 });
  };

  const act = (n, d, decidedAt) => {
    /** After a grow's calls: on success add its addresses and serve waiting pods; either way record the lead. */
    const grown = (addAddresses) => (ok) => {
      n.driver.seen.leadTimesMs.push(now - decidedAt);
      if (ok) {
        addAddresses();
        drain(n);
      } else counts.failedActions += 1;
      passDone(n, ok);
    };
    switch (d.kind) {
      case 'assign':
        return call(
          n,
          ['AssignPrivateIpAddresses'],
          grown(() => {
            for (let k = 0; k < d.count; k++) n.ds.addCidr(d.eniId, ip());
          }),
        );
      case 'create-eni':
        return call(
          n,
          ['CreateNetworkInterface', 'AttachNetworkInterface'],
          grown(() => {
            const id = `eni-${n.i}-${n.nextDevice}`;
            n.ds.addEni({ id, deviceNumber: n.nextDevice, routeTableId: n.nextDevice + 1, subnetId: 's' });
            n.nextDevice += 1;
            for (let k = 0; k < d.count; k++) n.ds.addCidr(id, ip());
          }),
        );
      case 'release': {
        for (const c of d.cidrs) n.ds.removeCidr(c.eniId, c.cidr);
        n.lastShrinkAt = now;
        const steps = [...new Set(d.cidrs.map((c) => c.eniId))].map(() => 'UnassignPrivateIpAddresses');
        return call(n, steps, (ok) => passDone(n, ok));
      }
      case 'free-eni':
        n.ds.removeEni(d.eniId);
        return call(n, ['DetachNetworkInterface', 'DeleteNetworkInterface'], (ok) => passDone(n, ok));
      default:
        return passDone(n, false);
    }
  };

  while (q.size > 0) {
    const ev = q.pop();
    now = ev.at;
    if (now > endMs) break;
    // Every event but a grant is one node's (`data` is the node or holds it), and may change its datastore.
    if (ev.kind !== 'grant') (ev.data.n ?? ev.data).free = undefined;
    switch (ev.kind) {
      case 'boot': {
        const n = ev.data;
        n.ds.addEni({
          id: `eni-${n.i}-0`,
          deviceNumber: 0,
          routeTableId: 254,
          subnetId: 's',
          isPrimary: true,
        });
        n.booted = true;
        scheduleLoop(n, now);
        drain(n);
        break;
      }
      case 'bound':
        ev.data.bound += 1;
        wake(ev.data);
        break;
      case 'add': {
        const { n, seen } = ev.data;
        if (seen) n.bound -= 1;
        pods += 1;
        const pod = `p${pods}`;
        n.pending.set(pod, now);
        const before = n.pending.size;
        if (n.booted) drain(n);
        if (n.pending.has(pod)) cold += 1;
        else if (before > 1) cold += 0;
        wake(n);
        break;
      }
      case 'retry':
        ev.data.retryArmed = false;
        if (ev.data.booted) drain(ev.data);
        else {
          ev.data.retryArmed = true;
          q.push(now + RETRY_MS, 'retry', ev.data);
        }
        break;
      case 'loop': {
        const { n, gen } = ev.data;
        if (gen !== n.loopGen) break;
        n.loopAt = Number.POSITIVE_INFINITY;
        const timing = n.lastShrinkAt === undefined ? { now } : { now, lastShrinkAt: n.lastShrinkAt };
        if (shared) n.driver.seen.budgetWaitMs = budgetWaits();
        const d = n.driver.decide(n.ds.stats(), timing, n.pending.size, n.bound);
        n.busy = d.kind !== 'none';
        act(n, d, now);
        break;
      }
      case 'call': {
        const { n, steps, done, i, attempt, granted } = ev.data;
        call(n, steps, done, i, attempt, granted);
        break;
      }
      case 'grant':
        grant(ev.data);
        break;
    }
  }
  const sorted = waits.slice().sort((a, b) => a - b);
  const pct = (p) =>
    sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  let idle = 0;
  for (const n of all) {
    const s = n.ds.stats();
    idle += s.totalIPs - s.assignedIPs;
  }
  return {
    nodes,
    pods,
    served: waits.length,
    coldStarts: cold,
    waitP50S: pct(0.5) / 1000,
    waitP99S: pct(0.99) / 1000,
    allServedS: lastServedAt / 1000,
    calls: counts.calls,
    throttled: counts.throttled,
    failedActions: counts.failedActions,
    callsPerPod: counts.calls / Math.max(pods, 1),
    budgetWaits: counts.budgetWaits,
    byAction: counts.byAction,
    idleAtEnd: idle,
  };
}

/** Every node already up (boots spread over the 2 minutes before t = 0); 108 pods each arrive over 10 min. */
export function fillScenario(nodes, policy, seed, budget = false, podWatch = false) {
  return runCluster({
    nodes,
    policy,
    seed,
    budget,
    podWatch,
    endMs: 1_800_000,
    startAt: (_, rand) => -120_000 + rand() * 60_000,
    arrivals: (_, rand) => Array.from({ length: 108 }, () => rand() * 600_000),
  });
}

/** `nodes` join at t = 0 with empty pools and 20 pods each land on them within 2 s. */
export function scaleUpScenario(nodes, policy, seed, budget = false, podWatch = false) {
  return runCluster({
    nodes,
    policy,
    seed,
    budget,
    podWatch,
    endMs: 1_800_000,
    startAt: (_, rand) => rand() * 5_000,
    arrivals: (_, rand) => Array.from({ length: 20 }, () => 5_000 + rand() * 2_000),
  });
}

/** The cluster-scale table: fill at 10 → 100 → 1,000 nodes and a 200-node scale-up, for both policies. */
export function clusterReport({ markdown = false, quick = false } = {}) {
  const rows = [
    [
      'scenario',
      'policy',
      'pods',
      'cold starts',
      'wait p50 / p99 (s)',
      'all served at (s)',
      'EC2 calls',
      'throttled',
      'calls / pod',
      'idle at end',
    ],
  ];
  const scenarios = [
    ...(quick ? [10, 100] : [10, 100, 1_000]).map((n) => [
      `${n} nodes × 108 pods over 10 min`,
      (p, b, w) => fillScenario(n, p, 7, b, w),
    ]),
    ['200 nodes join, 20 pods each at once', (p, b, w) => scaleUpScenario(200, p, 11, b, w)],
  ];
  for (const [label, run] of scenarios) {
    for (const budget of [false, true]) {
      for (const { policy: key, podWatch } of RUNS) {
        const policy = POLICIES[key];
        const m = run(policy, budget, podWatch);
        rows.push([
          label,
          `${policy.name}${podWatch ? ' + pod watch' : ''}${budget ? ' + cluster budget' : ''}`,
          m.pods,
          `${m.coldStarts} (${((100 * m.coldStarts) / Math.max(m.pods, 1)).toFixed(1)}%)`,
          `${m.waitP50S.toFixed(2)} / ${m.waitP99S.toFixed(2)}`,
          m.allServedS.toFixed(1),
          m.calls,
          m.throttled,
          m.callsPerPod.toFixed(3),
          `${m.idleAtEnd} (${(m.idleAtEnd / m.nodes).toFixed(1)}/node)`,
        ]);
      }
    }
  }
  return formatTable(rows, markdown);
}

const isMain = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  const { values: args, refuse } = commandLine(import.meta.url, {
    summary:
      'The cluster at scale, on a virtual clock: 10, 100 and 1,000 nodes and a 200-node scale-up sharing one\n' +
      "account's EC2 request limits, each policy with the reference's EC2 client and with a cluster budget.",
    options: {
      markdown: { type: 'boolean', description: 'print a Markdown table' },
      quick: { type: 'boolean', description: 'leave out the 1,000-node fills' },
      settings: {
        type: 'string',
        value: 'JSON',
        description: "the adaptive policy's settings, e.g. '{\"minWarm\":2}'",
      },
    },
  });
  if (args.settings !== undefined) {
    try {
      POLICIES.adaptive.adaptive = JSON.parse(args.settings);
    } catch {
      refuse(`--settings takes adaptive settings as JSON, e.g. '{"minWarm":2}', not ${args.settings}`);
    }
  }
  const t0 = performance.now();
  console.log(
    'cluster at scale: m5.4xlarge-like nodes (8 ENIs × 30 IPv4, max pods 110), one account, AWS EC2 request limits',
  );
  console.log(clusterReport({ markdown: args.markdown, quick: args.quick }));
  console.log(`(${((performance.now() - t0) / 1000).toFixed(1)} s of wall time)`);
}
