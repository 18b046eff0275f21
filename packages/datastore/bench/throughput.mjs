#!/usr/bin/env node
// Datastore assign/unassign throughput at 250 and 5000 addresses: shows assign/unassign are O(1).
//
//   npx turbo run build --filter=@vpc-cni-kit/datastore && node packages/datastore/bench/throughput.mjs
//
// Each measurement: a datastore half full of pods, then a churn loop (assign a new pod, unassign the oldest),
// the clock advancing 1 ms per step with a 100 ms cooldown so released addresses cycle back. Reported: the
// median of 7 runs (the two sizes alternate), ns per assign+unassign pair. Same-run baseline: a naive allocator that scans every
// address for a free one (what iterating all addresses per call costs).
import { commandLine } from '../../../scripts/lib/cli.mjs';

const { values } = commandLine(import.meta.url, {
  summary:
    'Datastore assign+unassign pairs at 250 and 5000 addresses, ns per pair, against a naive allocator that scans every address.',
  options: {
    runs: { type: 'count', default: 7, min: 1, description: 'runs per size (the median is reported)' },
  },
});
const { Datastore, nullCheckpointer } = await import('@vpc-cni-kit/datastore');

const RUNS = values.runs;
const STEPS = 20_000;
const ENIS = 10;

function ip(v) {
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}

function build(n, pd, checkpointer) {
  let t = 1_700_000_000_000;
  const clock = { now: () => t, tick: () => (t += 1) };
  const ds = new Datastore({ clock, checkpointer, prefixDelegation: pd, cooldownMs: 100 });
  let next = 10 << 24;
  for (let e = 0; e < ENIS; e++) {
    ds.addEni({ id: `eni-${e}`, deviceNumber: e, routeTableId: e + 1, subnetId: 's', isPrimary: e === 0 });
    const cidrs = pd ? n / 16 / ENIS : n / ENIS;
    for (let k = 0; k < cidrs; k++) {
      ds.addCidr(`eni-${e}`, pd ? `${ip(next)}/28` : `${ip(next)}/32`);
      next += pd ? 16 : 1;
    }
  }
  return { ds, clock };
}

const key = (i) => ({ networkName: 'aws-cni', containerID: `c${i}`, ifName: 'eth0' });

function churn(n, pd, checkpointer, steps = STEPS) {
  const { ds, clock } = build(n, pd, checkpointer);
  const live = [];
  let id = 0;
  for (; id < n / 2; id++) {
    ds.assign(key(id));
    live.push(id);
  }
  let head = 0;
  const t0 = process.hrtime.bigint();
  for (let s = 0; s < steps; s++) {
    clock.tick();
    ds.assign(key(id));
    live.push(id++);
    ds.unassign(key(live[head++]));
  }
  return Number(process.hrtime.bigint() - t0) / steps;
}

/** Baseline: free-address search by scanning every address (O(n) per assign). */
function naive(n) {
  const owner = new Array(n).fill(undefined);
  const byKey = new Map();
  const live = [];
  let id = 0;
  const assign = (k) => {
    for (let i = 0; i < n; i++) {
      if (owner[i] === undefined) {
        owner[i] = k;
        byKey.set(k, i);
        return i;
      }
    }
    throw new Error('full');
  };
  for (; id < n / 2; id++) {
    assign(`c${id}`);
    live.push(id);
  }
  let head = 0;
  const t0 = process.hrtime.bigint();
  for (let s = 0; s < STEPS; s++) {
    assign(`c${id}`);
    live.push(id++);
    const k = `c${live[head++]}`;
    owner[byKey.get(k)] = undefined;
    byKey.delete(k);
  }
  return Number(process.hrtime.bigint() - t0) / STEPS;
}

/** A checkpointer that serializes (as the file adapter does) but skips the disk. */
const serializing = {
  read: () => undefined,
  write: (c) => {
    if (c.serialize().length === 0) throw new Error('empty');
  },
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Runs both sizes alternately (so machine noise hits both alike) and returns the medians. */
function measure(fn) {
  fn(250);
  fn(5000);
  const a = [];
  const b = [];
  for (let r = 0; r < RUNS; r++) {
    a.push(fn(250));
    b.push(fn(5000));
  }
  return [median(a), median(b)];
}

const cases = [
  ['datastore, /32 mode', (n) => churn(n, false, nullCheckpointer)],
  ['datastore, prefix mode', (n) => churn(n, true, nullCheckpointer)],
  ['datastore, /32 + checkpoint serialization', (n) => churn(n, false, serializing, 1_000)],
  ['baseline: scan all addresses', (n) => naive(n)],
];
console.log(`node ${process.version}; ${STEPS} assign+unassign pairs per run, median of ${RUNS}`);
console.log('| case | ns/pair @ 250 | ns/pair @ 5000 | 5000 ÷ 250 |');
console.log('|---|---|---|---|');
for (const [name, fn] of cases) {
  const [a, b] = measure(fn);
  console.log(`| ${name} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(b / a).toFixed(2)} |`);
}
