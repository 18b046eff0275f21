// Full and no-op reconcile of node routing for 250 pods through @vpc-cni-kit/routing-table's netlink port,
// against `ip -batch` doing the same adds in one process (same run). Works only inside one scratch namespace
// it creates and deletes. Needs root and a build:
//   npx turbo run build --filter=@vpc-cni-kit/routing-table && node benchmarks/routing-table/reconcile.mjs
// Optional arguments: timed iterations (default 15) and pod count (default 250).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { netnsAdd, netnsDel, openSync } from '@vpc-cni-kit/netlink';
import {
  netlinkRoutingPort,
  planNodeRouting,
  reconcileRouting,
  teardownRouting,
} from '@vpc-cni-kit/routing-table';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { summarize } from '../lib/timing.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    "Full and no-op reconcile of node routing through @vpc-cni-kit/routing-table's netlink port, against\n" +
    '`ip -batch` doing the same adds, in a scratch namespace (root). Build @vpc-cni-kit/routing-table first.',
  positionals: [
    { name: 'runs', type: 'count', default: 15, min: 1, description: 'timed iterations' },
    { name: 'pods', type: 'count', default: 250, min: 1, description: 'pods on the node' },
  ],
});
const RUNS = args.runs;
const PODS = args.pods;
const tag = randomBytes(3).toString('hex');
const NS = `vckbr${tag}`;
const PODNS = `vckbp${tag}`;
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

const nsPath = netnsAdd(NS);
const podNsPath = netnsAdd(PODNS);
try {
  const h = openSync({ netns: nsPath });
  h.linkSet('lo', { up: true });
  h.linkAdd({ kind: 'veth', name: 'eth1', up: true, peer: { name: 'eth1p', up: true } });
  const pods = [];
  for (let i = 0; i < PODS; i++) {
    const name = `eni${i.toString(16).padStart(11, '0')}`;
    h.linkAdd({ kind: 'veth', name, up: true, peer: { name: `p${i}`, netns: podNsPath } });
    // Pod ends live in another namespace, as on a node (the host sees one link per pod).
    // Half the pods use secondary-ENI addresses (table 2: an extra from-pod rule), half the primary's.
    const secondary = i % 2 === 0;
    pods.push({
      podIp: `10.${secondary ? 1 : 0}.${(i >> 8) + 10}.${i & 255}`,
      hostVeth: name,
      table: secondary ? 2 : 254,
    });
  }
  const plan = planNodeRouting({
    enis: [{ interfaceName: 'eth1', deviceNumber: 1, primaryIp: '10.1.0.10', subnetCidr: '10.1.0.0/16' }],
    pods,
    fwmark: 0x80,
    externalServiceCidrs: ['172.20.0.0/16'],
  });
  const port = netlinkRoutingPort(h);
  const batch = [
    ...plan.routes.map(
      (r) =>
        `route replace ${r.dst}${r.gateway ? ` via ${r.gateway}` : ''} dev ${r.dev} table ${r.table}${r.scope === 'link' ? ' scope link' : ''}`,
    ),
    ...plan.rules.map(
      (r) =>
        `rule add${r.from ? ` from ${r.from}` : ''}${r.to ? ` to ${r.to}` : ''}${r.fwmark ? ` fwmark ${r.fwmark}/${r.fwmask}` : ''} lookup ${r.table} pref ${r.priority}`,
    ),
  ].join('\n');

  const full = [];
  const noop = [];
  const ipBatch = [];
  let changes = 0;
  for (let i = 0; i < RUNS + 2; i++) {
    await teardownRouting(port, plan);
    let t0 = process.hrtime.bigint();
    changes = (await reconcileRouting(port, plan)).changes;
    const f = ms(t0);
    t0 = process.hrtime.bigint();
    const n = (await reconcileRouting(port, plan)).changes;
    const o = ms(t0);
    if (n !== 0) throw new Error(`no-op reconcile changed ${n}`);
    await teardownRouting(port, plan);
    t0 = process.hrtime.bigint();
    execFileSync('ip', ['-n', NS, '-batch', '-'], { input: `${batch}\n` });
    const b = ms(t0);
    if (i >= 2) {
      full.push(f);
      noop.push(o);
      ipBatch.push(b);
    }
  }
  await teardownRouting(port, plan);
  h.close();
  const rows = [
    ['full reconcile (read, diff, apply)', summarize(full)],
    ['no-op reconcile (read, diff)', summarize(noop)],
    ['baseline: `ip -batch` of the same adds (1 process)', summarize(ipBatch)],
  ];
  const base = rows[2][1].median;
  console.log(
    `${PODS} pods: ${plan.routes.length} routes, ${plan.rules.length} rules; ${changes} changes on a full reconcile; ${RUNS} runs\n`,
  );
  console.log('| operation | median ms | p10–p90 ms | ratio to baseline |');
  console.log('| --- | --- | --- | --- |');
  for (const [name, s] of rows) {
    console.log(
      `| ${name} | ${s.median.toFixed(1)} | ${s.p10.toFixed(1)}–${s.p90.toFixed(1)} | ${(s.median / base).toFixed(2)}× |`,
    );
  }
} finally {
  netnsDel(NS);
  netnsDel(PODNS);
}
