#!/usr/bin/env node
// Time from "assign" to "durable" per pod ADD, synchronous file checkpointer vs the group-commit one, the way
// the aws-node daemon uses them: assign, then a stretch of synchronous work on the event loop (pod plumbing
// over a synchronous netlink handle, simulated by a busy wait of --work-ms), then wait for durability.
//
//   npx turbo run build --filter=@vpc-cni-kit/datastore
//   node packages/datastore/bench/checkpoint-latency.mjs        # --runs 300 --work-ms 2.5 --burst 10 [--dir D]
//
// Reported per variant (interleaved rounds, one scratch directory on the filesystem of --dir, default the
// OS temp dir): p50/p90/p99 of the per-ADD latency, the event-loop time the checkpoint costs per ADD (how
// long the call itself blocks), and for a burst of --burst concurrent ADDs, the writes per ADD. Same-run
// baseline: the synchronous adapter (`createFileCheckpointer`, write + fsync + rename + fsync on the loop).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandLine } from '../../../scripts/lib/cli.mjs';

const { values, refuse } = commandLine(import.meta.url, {
  summary:
    'Per pod ADD, the time from assign to durable: the synchronous file checkpointer (baseline) against group commit.',
  options: {
    runs: { type: 'count', default: 300, min: 1, description: 'rounds (one ADD per variant each)' },
    'work-ms': {
      type: 'string',
      value: 'MS',
      default: '2.5',
      description: 'synchronous work after each assign, ms',
    },
    burst: { type: 'count', default: 10, min: 1, description: 'concurrent ADDs in the burst measurement' },
    dir: {
      type: 'string',
      value: 'DIR',
      description: 'where the scratch directory goes (default: the OS temp dir)',
    },
  },
});
const RUNS = values.runs;
const WORK_MS = Number(values['work-ms']);
if (!(WORK_MS >= 0 && Number.isFinite(WORK_MS)))
  refuse(`--work-ms must be a number ≥ 0, not '${values['work-ms']}'`);
const BURST = values.burst;
const { createFileCheckpointer, createGroupCommitFileCheckpointer, Datastore } = await import(
  '@vpc-cni-kit/datastore'
);
const base = mkdtempSync(join(values.dir ?? tmpdir(), 'vck-ds-latency-'));

function node(checkpointer) {
  let t = 1_700_000_000_000;
  const ds = new Datastore({ clock: { now: () => (t += 1) }, checkpointer, cooldownMs: 0 });
  ds.addEni({ id: 'eni-0', deviceNumber: 0, routeTableId: 254, subnetId: 's', isPrimary: true });
  for (let i = 0; i < 200; i++) ds.addCidr('eni-0', `10.0.0.${i}/32`);
  return ds;
}

function busy(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

const q = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const fmt = (x) => x.toFixed(2);

const variants = {
  sync: { ds: node(createFileCheckpointer(join(base, 'sync.json'))), lat: [], blocked: [] },
  group: {
    ds: undefined,
    cp: createGroupCommitFileCheckpointer(join(base, 'group.json')),
    lat: [],
    blocked: [],
  },
};
variants.group.ds = node(variants.group.cp);
// The other way of writing from the default on this file system: the thread pool where the default is inline
// (tmpfs, ramfs), inline where it is the thread pool (a disk, where each write then blocks on its flushes).
variants.other = {
  cp: createGroupCommitFileCheckpointer(join(base, 'other.json'), { inline: !variants.group.cp.inline }),
  lat: [],
  blocked: [],
};
variants.other.ds = node(variants.other.cp);
variants.unflushed = {
  cp: createGroupCommitFileCheckpointer(join(base, 'unflushed.json'), { durability: 'process-crash' }),
  lat: [],
  blocked: [],
};
variants.unflushed.ds = node(variants.unflushed.cp);
// A node with 30 pods already: the checkpoint is rewritten whole, as in production.
for (const v of Object.values(variants)) {
  for (let i = 0; i < 30; i++) {
    const c = v.ds.assignPending({ networkName: 'aws-cni', containerID: `seed-${i}`, ifName: 'eth0' });
    await c.durable;
  }
}

let n = 0;
try {
  for (let r = 0; r < RUNS; r++) {
    for (const v of Object.values(variants)) {
      const key = { networkName: 'aws-cni', containerID: `c-${n++}`, ifName: 'eth0' };
      const t0 = performance.now();
      const change = v.ds.assignPending(key, { namespace: 'default', name: `p${n}` });
      const t1 = performance.now();
      busy(WORK_MS);
      await change.durable;
      v.lat.push(performance.now() - t0);
      v.blocked.push(t1 - t0);
      await v.ds.unassignPending(key).durable;
      await new Promise((res) => setTimeout(res, 2));
    }
  }

  console.log(
    `## Checkpoint latency per ADD (${RUNS} rounds, ${WORK_MS} ms of synchronous work after assign; ${base})\n`,
  );
  console.log('| checkpointer | p50 ms | p90 ms | p99 ms | event loop blocked per ADD, p50 / p99 ms |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const [name, v] of Object.entries(variants)) {
    console.log(
      `| ${{ sync: '`createFileCheckpointer` (baseline)', group: `\`createGroupCommitFileCheckpointer\` (default here: ${variants.group.cp.inline ? 'inline' : 'thread pool'})`, other: `group commit, \`inline: ${variants.other.cp.inline}\``, unflushed: "group commit, `durability: 'process-crash'`" }[name]} | ${fmt(q(v.lat, 0.5))} | ${fmt(q(v.lat, 0.9))} | ${fmt(q(v.lat, 0.99))} | ${fmt(q(v.blocked, 0.5))} / ${fmt(q(v.blocked, 0.99))} |`,
    );
  }

  // A burst of concurrent ADDs: the synchronous adapter writes once per ADD, the group commit coalesces.
  const { ds, cp } = variants.group;
  const before = cp.stats();
  const t0 = performance.now();
  const burst = Array.from({ length: BURST }, (_, i) =>
    ds.assignPending({ networkName: 'aws-cni', containerID: `burst-${i}`, ifName: 'eth0' }),
  );
  await Promise.all(burst.map((c) => c.durable));
  const groupMs = performance.now() - t0;
  const writes = cp.stats().writes - before.writes;
  const s0 = performance.now();
  for (let i = 0; i < BURST; i++)
    variants.sync.ds.assign({ networkName: 'aws-cni', containerID: `burst-${i}`, ifName: 'eth0' });
  const syncMs = performance.now() - s0;
  console.log(
    `\nBurst of ${BURST} concurrent ADDs: group commit ${fmt(groupMs)} ms in ${writes} writes; synchronous ${fmt(syncMs)} ms in ${BURST} writes (${fmt(syncMs / groupMs)}×).`,
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}
