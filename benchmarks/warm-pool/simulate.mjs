#!/usr/bin/env node
// Trace-driven warm-pool simulator: replays pod add/del traces against @vpc-cni-kit/datastore (real) and
// @vpc-cni-kit/warm-pool (real policy) with a seeded EC2 latency model, and compares policy settings.
//
//   node benchmarks/warm-pool/simulate.mjs [trace.csv ...] [--seed N] [--markdown] [--loop reference|daemon]
//
// With no trace arguments it runs the three shipped traces. See README.md for the model and CSV format.
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { DEFAULT_TARGETS } from '@vpc-cni-kit/warm-pool';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { formatTable, parseTrace } from './lib.mjs';
import { ADAPTIVE_POLICY, INSTANCE, simulate } from './node-sim.mjs';

// ---------------------------------------------------------------- configuration

/** The settings the shipped results table compares (the adaptive policy's full report is report.mjs). */
export const POLICIES = [
  { name: 'defaults (WARM_ENI_TARGET=1)', targets: { ...DEFAULT_TARGETS } },
  { name: 'WARM_IP_TARGET=5', targets: { ...DEFAULT_TARGETS, warmIpTarget: 5 } },
  {
    name: 'MINIMUM_IP_TARGET=20 + WARM_IP_TARGET=2',
    targets: { ...DEFAULT_TARGETS, minimumIpTarget: 20, warmIpTarget: 2 },
  },
  {
    name: 'PD + WARM_PREFIX_TARGET=1',
    targets: { ...DEFAULT_TARGETS, prefixDelegation: true, warmPrefixTarget: 1 },
  },
  ADAPTIVE_POLICY,
];

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
  return formatTable([head, ...body], markdown);
}

const isMain = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  const { values: args } = commandLine(import.meta.url, {
    summary:
      'Trace-driven warm-pool simulator: replays pod add/del traces against the real datastore and warm-pool\n' +
      'policy with a seeded EC2 latency model, and compares policy settings.',
    options: {
      seed: { type: 'count', default: 42, description: 'seed of the EC2 latency model' },
      markdown: { type: 'boolean', description: 'print a Markdown table' },
      loop: {
        type: 'string',
        choices: ['reference', 'daemon'],
        default: 'reference',
        description: "the pool loop: the reference's (a fixed period) or aws-node's (wakes on demand)",
      },
    },
    positionals: [
      { name: 'trace.csv', rest: true, description: 'traces to replay (default: the three shipped ones)' },
    ],
  });
  const markdown = args.markdown;
  const seed = args.seed;
  const loop = args.loop;
  const files = args['trace.csv'];
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
      rows.push({
        trace: basename(file, '.csv'),
        policy: policy.name,
        m: simulate(events, policy, seed, { loop }),
      });
    }
  }
  console.log(
    `instance: m5.large-like (${INSTANCE.maxEnis} ENIs × ${INSTANCE.ipv4PerEni} IPv4), seed ${seed}, ${loop} pool loop`,
  );
  console.log(table(rows, markdown));
}
