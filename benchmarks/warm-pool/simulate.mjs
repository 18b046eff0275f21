#!/usr/bin/env node
// Trace-driven warm-pool simulator: replays pod add/del traces against @vpc-cni-kit/datastore (real) and
// @vpc-cni-kit/warm-pool (real policy) with a seeded EC2 latency model, and compares policy settings.
//
//   node benchmarks/warm-pool/simulate.mjs [trace.csv ...] [--seed N] [--markdown]
//
// With no trace arguments it runs the three shipped traces. See README.md for the model and CSV format.
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Datastore, isDatastoreError, nullCheckpointer } from '@vpc-cni-kit/datastore';
import { DEFAULT_TARGETS, decide } from '@vpc-cni-kit/warm-pool';
import { parseTrace, prng } from './lib.mjs';

// ---------------------------------------------------------------- configuration

/** m5.large: 3 ENIs × 10 IPv4 addresses; max pods 29 (eni-max-pods.txt) or 110 with prefix delegation. */
const INSTANCE = { maxEnis: 3, ipv4PerEni: 10 };

export const POLICIES = [
  { name: 'defaults (WARM_ENI_TARGET=1)', targets: { ...DEFAULT_TARGETS }, maxPods: 29 },
  { name: 'WARM_IP_TARGET=5', targets: { ...DEFAULT_TARGETS, warmIpTarget: 5 }, maxPods: 29 },
  {
    name: 'MINIMUM_IP_TARGET=20 + WARM_IP_TARGET=2',
    targets: { ...DEFAULT_TARGETS, minimumIpTarget: 20, warmIpTarget: 2 },
    maxPods: 29,
  },
  {
    name: 'PD + WARM_PREFIX_TARGET=1',
    targets: { ...DEFAULT_TARGETS, prefixDelegation: true, warmPrefixTarget: 1 },
    maxPods: 110,
  },
];

/** The reference's pool loop: a check every 5 s (2.5 s + 2.5 s), one action per pass. */
const LOOP_MS = 5_000;
/** The node comes up this long before the trace starts, so the pool is warm for the first pod. */
const WARMUP_MS = 60_000;
/** Host-network pods (kube-proxy, aws-node) that count against max pods but need no address. */
const HOST_NETWORK_PODS = 2;
/** A pod whose ADD failed is retried this often (kubelet retries the sandbox). */
const RETRY_MS = 1_000;

/** EC2 latency model (ms), seeded. */
function latencyModel(rand) {
  const between = (lo, hi) => lo + (hi - lo) * rand();
  return {
    /** AssignPrivateIpAddresses (IPs or prefixes): ≈ 0.5 s. */
    assign: () => between(300, 800),
    /** UnassignPrivateIpAddresses. */
    unassign: () => between(300, 800),
    /** CreateNetworkInterface + AttachNetworkInterface, until the ENI's addresses are usable: 1–10 s. */
    createAttach: () => between(1_000, 10_000),
    /** DetachNetworkInterface + DeleteNetworkInterface. */
    detachDelete: () => between(1_000, 3_000),
  };
}

// ---------------------------------------------------------------- event queue

class Queue {
  items = [];
  seq = 0;
  push(at, kind, data) {
    const item = { at, seq: this.seq++, kind, data };
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p].at < item.at || (a[p].at === item.at && a[p].seq < item.seq)) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = item;
  }
  pop() {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        const less = (x, y) => x.at < y.at || (x.at === y.at && x.seq < y.seq);
        if (l < a.length && less(a[l], m === i ? last : a[m])) m = l;
        if (r < a.length && less(a[r], m === i ? last : a[m])) m = r;
        if (m === i) break;
        a[i] = a[m];
        i = m;
      }
      a[i] = last;
    }
    return top;
  }
  get size() {
    return this.items.length;
  }
}

// ---------------------------------------------------------------- one run

/** Replays `events` under `policy`; returns the metrics. Deterministic for a given seed. */
export function simulate(events, policy, seed = 42) {
  const lat = latencyModel(prng(seed));
  let now = -WARMUP_MS;
  const clock = { now: () => now };
  const ds = new Datastore({
    clock,
    checkpointer: nullCheckpointer,
    prefixDelegation: policy.targets.prefixDelegation,
  });
  const limits = { ...INSTANCE, maxPods: policy.maxPods };
  // Fake subnet: /32s from 10.0.0.0/16 upward, /28 prefixes from 10.1.0.0/16 upward.
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
  const end = Math.max(0, ...events.map((e) => e.time * 1000)) + 60_000;
  q.push(-WARMUP_MS, 'loop');
  q.push(end, 'end');

  const calls = {
    AssignPrivateIpAddresses: 0,
    UnassignPrivateIpAddresses: 0,
    CreateNetworkInterface: 0,
    AttachNetworkInterface: 0,
    DetachNetworkInterface: 0,
    DeleteNetworkInterface: 0,
  };
  const pending = new Map(); // pod → arrival ms (waiting for an address)
  const running = new Set();
  const rejected = new Set(); // pods over max pods: the scheduler would have placed them elsewhere
  let overMaxPods = 0;
  const waits = [];
  let coldStarts = 0;
  let served = 0;
  let lastShrinkAt;
  let retryArmed = false;
  // Idle-address integral (addresses × ms) over [0, end], and the peak.
  let idleArea = 0;
  let peakIdle = 0;
  let lastSample = 0;
  let idleNow = 0;
  const sample = () => {
    if (now > 0) {
      const from = Math.max(lastSample, 0);
      idleArea += idleNow * (now - from);
      lastSample = now;
    }
    const s = ds.stats();
    idleNow = s.totalIPs - s.assignedIPs;
    // Self-check: every running pod's address lies in a CIDR the node still has.
    const cidrs = new Set(s.enis.flatMap((e) => e.cidrs.map((c) => c.cidr)));
    for (const a of ds.assignments()) {
      if (!cidrs.has(a.cidr)) throw new Error(`simulator invariant: ${a.address} is in released ${a.cidr}`);
    }
    if (now >= 0) peakIdle = Math.max(peakIdle, idleNow);
  };

  const tryAssign = (pod) => {
    try {
      ds.assign({ networkName: 'aws-cni', containerID: pod, ifName: 'eth0' });
      running.add(pod);
      return true;
    } catch (e) {
      if (isDatastoreError(e, 'NoAvailableAddress')) return false;
      throw e;
    }
  };
  const drainPending = () => {
    for (const [pod, at] of pending) {
      if (running.size >= policy.maxPods) break;
      if (!tryAssign(pod)) break;
      pending.delete(pod);
      waits.push(now - at);
    }
    if (pending.size > 0 && !retryArmed) {
      retryArmed = true;
      q.push(now + RETRY_MS, 'retry');
    }
  };

  while (q.size > 0) {
    const ev = q.pop();
    now = ev.at;
    switch (ev.kind) {
      case 'add': {
        // The scheduler never places more than max pods on a node: those pods go elsewhere.
        if (running.size + pending.size >= policy.maxPods - HOST_NETWORK_PODS) {
          rejected.add(ev.data);
          overMaxPods += 1;
          break;
        }
        served += 1;
        if (pending.size === 0 && running.size < policy.maxPods && tryAssign(ev.data)) {
          waits.push(0);
        } else {
          coldStarts += 1;
          pending.set(ev.data, now);
          drainPending();
        }
        break;
      }
      case 'del': {
        if (rejected.delete(ev.data)) break;
        if (pending.delete(ev.data)) break;
        ds.unassign({ networkName: 'aws-cni', containerID: ev.data, ifName: 'eth0' });
        running.delete(ev.data);
        drainPending();
        break;
      }
      case 'retry':
        retryArmed = false;
        drainPending();
        break;
      case 'loop': {
        const d = decide({
          stats: ds.stats(),
          targets: policy.targets,
          limits,
          timing: lastShrinkAt === undefined ? { now } : { now, lastShrinkAt },
        });
        let busy = 0;
        if (d.kind === 'assign') {
          calls.AssignPrivateIpAddresses += 1;
          busy = lat.assign();
          q.push(now + busy, 'assigned', { eniId: d.eniId, unit: d.unit, count: d.count });
        } else if (d.kind === 'create-eni') {
          calls.CreateNetworkInterface += 1;
          calls.AttachNetworkInterface += 1;
          busy = lat.createAttach();
          q.push(now + busy, 'attached', { unit: d.unit, count: d.count });
        } else if (d.kind === 'release') {
          // The reference removes the CIDRs from the datastore first, then calls EC2.
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
        // The loop is sequential: the next pass starts after the EC2 call returns.
        if (now + busy + LOOP_MS < end) q.push(now + busy + LOOP_MS, 'loop');
        break;
      }
      case 'assigned': {
        for (let i = 0; i < ev.data.count; i++) ds.addCidr(ev.data.eniId, newCidr(ev.data.unit));
        drainPending();
        break;
      }
      case 'attached': {
        const id = `eni-${nextDevice}`;
        ds.addEni({ id, deviceNumber: nextDevice, routeTableId: nextDevice + 1, subnetId: 'subnet-a' });
        nextDevice += 1;
        for (let i = 0; i < ev.data.count; i++) ds.addCidr(id, newCidr(ev.data.unit));
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
  return {
    pods: served,
    overMaxPods,
    coldStarts,
    unserved: pending.size,
    coldWaitMeanS: cold.length === 0 ? 0 : cold.reduce((a, b) => a + b, 0) / cold.length / 1000,
    coldWaitP50S: pct(0.5) / 1000,
    coldWaitMaxS: (cold.at(-1) ?? 0) / 1000,
    avgIdle: idleArea / end,
    peakIdle,
    ec2Mutating: mutating,
    calls,
    enisAtEnd: ds.eniIds().length,
  };
}

// ---------------------------------------------------------------- CLI

function table(rows, markdown) {
  const head = [
    'trace',
    'policy',
    'pods (over max)',
    'cold starts',
    'wait mean / p50 / max (s)',
    'unserved',
    'idle avg',
    'idle peak',
    'EC2 mutating calls',
  ];
  const body = rows.map((r) => [
    r.trace,
    r.policy,
    `${r.m.pods} (${r.m.overMaxPods})`,
    `${r.m.coldStarts} (${((100 * r.m.coldStarts) / Math.max(r.m.pods, 1)).toFixed(1)}%)`,
    r.m.coldStarts - r.m.unserved > 0 || r.m.coldWaitMaxS > 0
      ? `${r.m.coldWaitMeanS.toFixed(1)} / ${r.m.coldWaitP50S.toFixed(1)} / ${r.m.coldWaitMaxS.toFixed(1)}`
      : '–',
    String(r.m.unserved),
    r.m.avgIdle.toFixed(1),
    String(r.m.peakIdle),
    String(r.m.ec2Mutating),
  ]);
  if (markdown) {
    return [
      `| ${head.join(' | ')} |`,
      `|${head.map(() => '---').join('|')}|`,
      ...body.map((b) => `| ${b.join(' | ')} |`),
    ].join('\n');
  }
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const fmt = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  return [fmt(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(fmt)].join('\n');
}

const isMain = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  const args = process.argv.slice(2);
  const markdown = args.includes('--markdown');
  const seedAt = args.indexOf('--seed');
  const seed = seedAt >= 0 ? Number(args[seedAt + 1]) : 42;
  const files = args.filter((a, i) => !a.startsWith('--') && (seedAt < 0 || i !== seedAt + 1));
  const dir = new URL('./traces/', import.meta.url).pathname;
  const traces =
    files.length > 0
      ? files
      : ['steady-churn.csv', 'diurnal-ramp.csv', 'burst-100.csv'].map((f) => join(dir, f));
  const rows = [];
  for (const file of traces) {
    let events;
    try {
      events = parseTrace(readFileSync(file, 'utf8'), file);
    } catch (e) {
      console.error(`simulate: ${e.message}`);
      process.exit(1);
    }
    for (const policy of POLICIES) {
      rows.push({ trace: basename(file, '.csv'), policy: policy.name, m: simulate(events, policy, seed) });
    }
  }
  console.log(
    `instance: m5.large-like (${INSTANCE.maxEnis} ENIs × ${INSTANCE.ipv4PerEni} IPv4), seed ${seed}`,
  );
  console.log(table(rows, markdown));
}
