// Each rtnetlink operation through @vpc-cni-kit/netlink vs spawning `ip` for the same work, in the same run.
// Works only inside two scratch namespaces it creates and deletes. Needs root and a build:
//   npx turbo run build --filter=@vpc-cni-kit/netlink && node benchmarks/netlink/ops.mjs
// `--runs N` (default 200) sets iterations for the fast operations; slow ones (link delete) use N/10.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { netnsAdd, netnsDel, open, openSync } from '@vpc-cni-kit/netlink';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { summarize } from '../lib/timing.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    'Each rtnetlink operation through @vpc-cni-kit/netlink against spawning `ip` for the same work, in two scratch\n' +
    'namespaces (root). Build @vpc-cni-kit/netlink first.',
  options: {
    runs: {
      type: 'count',
      default: 200,
      min: 1,
      description: 'iterations of the fast operations (slow ones, such as link delete, run a tenth)',
    },
  },
});
const RUNS = args.runs;
const SLOW = Math.max(5, Math.round(RUNS / 10));
const tag = randomBytes(3).toString('hex');
const HOST = `vckbh${tag}`;
const POD = `vckbp${tag}`;

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const time = (f) => {
  const t0 = process.hrtime.bigint();
  f();
  return ms(t0);
};
const timeAsync = async (f) => {
  const t0 = process.hrtime.bigint();
  await f();
  return ms(t0);
};
const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });

const rows = [];
function record(name, ours, theirs, target) {
  const a = summarize(ours);
  const b = theirs ? summarize(theirs) : undefined;
  rows.push({ name, a, b, target });
}

const hostPath = netnsAdd(HOST);
const podPath = netnsAdd(POD);
try {
  const h = openSync({ netns: hostPath });
  h.linkSet('lo', { up: true });
  h.linkAdd({ kind: 'veth', name: 'b0', up: true, peer: { name: 'b1' } });
  h.linkSet('b1', { up: true });
  h.addrAdd({ dev: 'b0', address: '10.40.0.1/24' });
  const b0 = h.linkGet('b0').index;

  // Warm both paths (page cache for `ip`, JIT for us).
  for (let i = 0; i < 20; i++) {
    h.linkList();
    ip('-n', HOST, 'link', 'show');
  }

  const pairs = [
    [
      'address add',
      () => h.addrAdd({ dev: b0, address: '10.41.0.5/32' }),
      ['addr', 'add', '10.41.0.5/32', 'dev', 'b0'],
    ],
    [
      'address del',
      () => h.addrDel({ dev: b0, address: '10.41.0.5/32' }),
      ['addr', 'del', '10.41.0.5/32', 'dev', 'b0'],
    ],
    [
      'route add',
      () => h.routeAdd({ dst: '10.42.0.0/24', gateway: '10.40.0.2', dev: b0, table: 1000 }),
      ['route', 'add', 'table', '1000', '10.42.0.0/24', 'via', '10.40.0.2', 'dev', 'b0'],
    ],
    [
      'route del',
      () => h.routeDel({ dst: '10.42.0.0/24', table: 1000 }),
      ['route', 'del', 'table', '1000', '10.42.0.0/24'],
    ],
    [
      'rule add',
      () => h.ruleAdd({ from: '10.41.0.5/32', priority: 1536, table: 1000 }),
      ['rule', 'add', 'from', '10.41.0.5/32', 'pref', '1536', 'lookup', '1000'],
    ],
    [
      'rule del',
      () => h.ruleDel({ from: '10.41.0.5/32', priority: 1536, table: 1000 }),
      ['rule', 'del', 'from', '10.41.0.5/32', 'pref', '1536', 'lookup', '1000'],
    ],
    [
      'neighbour add',
      () => h.neighAdd({ dev: b0, address: '10.40.0.9', lladdr: '02:00:00:00:00:09' }),
      ['neigh', 'add', '10.40.0.9', 'lladdr', '02:00:00:00:00:09', 'nud', 'permanent', 'dev', 'b0'],
    ],
    [
      'neighbour del',
      () => h.neighDel({ dev: b0, address: '10.40.0.9' }),
      ['neigh', 'del', '10.40.0.9', 'dev', 'b0'],
    ],
  ];
  const ours = Object.fromEntries(pairs.map(([n]) => [n, []]));
  const theirs = Object.fromEntries(pairs.map(([n]) => [n, []]));
  for (let i = 0; i < RUNS; i++) {
    for (const [name, f] of pairs) ours[name].push(time(f));
    for (const [name, , argv] of pairs) theirs[name].push(time(() => ip('-n', HOST, ...argv)));
  }
  for (const [name] of pairs) record(name, ours[name], theirs[name], 'p50 ≤ 0.5 ms, ≥ 10×');

  const list = [];
  const listIp = [];
  for (let i = 0; i < RUNS; i++) {
    list.push(time(() => h.linkList()));
    listIp.push(time(() => JSON.parse(ip('-n', HOST, '-j', 'link', 'show').toString())));
  }
  record('link list (dump)', list, listIp);

  const route = [];
  const routeIp = [];
  for (let i = 0; i < RUNS; i++) {
    route.push(time(() => h.routeList({ table: 'all' })));
    routeIp.push(time(() => JSON.parse(ip('-n', HOST, '-j', 'route', 'show', 'table', 'all').toString())));
  }
  record('route list, all tables (dump)', route, routeIp);

  const openNs = [];
  for (let i = 0; i < RUNS; i++) openNs.push(time(() => openSync({ netns: podPath }).close()));
  record('open handle in a namespace (setns → socket → setns)', openNs);

  // veth with the peer created directly in the pod namespace, and the deletes (slow in the kernel).
  const veth = [];
  const vethIp = [];
  const del = [];
  const delIp = [];
  for (let i = 0; i < SLOW; i++) {
    veth.push(time(() => h.linkAdd({ kind: 'veth', name: 'pv0', peer: { name: 'eth0', netns: podPath } })));
    del.push(time(() => h.linkDel('pv0')));
    vethIp.push(
      time(() =>
        ip('-n', HOST, 'link', 'add', 'name', 'pv0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', POD),
      ),
    );
    delIp.push(time(() => ip('-n', HOST, 'link', 'del', 'dev', 'pv0')));
  }
  record('veth, peer created in pod ns', veth, vethIp, 'p50 ≤ 2 ms');
  record('link del (veth)', del, delIp);

  // Async handle: same fast ops; the kernel work runs on koffi's worker thread.
  const a = await open({ netns: hostPath });
  const asyncAddr = [];
  const asyncList = [];
  const asyncDel = [];
  for (let i = 0; i < RUNS; i++) {
    asyncAddr.push(await timeAsync(() => a.addrAdd({ dev: b0, address: '10.41.0.6/32' })));
    await a.addrDel({ dev: b0, address: '10.41.0.6/32' });
    asyncList.push(await timeAsync(() => a.linkList()));
  }
  for (let i = 0; i < SLOW; i++) {
    h.linkAdd({ kind: 'veth', name: 'pv1', peer: { name: 'eth1', netns: podPath } });
    asyncDel.push(await timeAsync(() => a.linkDel('pv1')));
  }
  record('async: address add', asyncAddr, theirs['address add']);
  record('async: link list (dump)', asyncList, listIp);
  record('async: link del (veth)', asyncDel, delIp);
  a.close();
  h.close();
} finally {
  netnsDel(HOST);
  netnsDel(POD);
}

const f = (x) => x.toFixed(3);
console.log(
  `--runs ${RUNS} (slow ops ${SLOW}); node ${process.version}; ${new Date().toISOString().slice(0, 10)}\n`,
);
console.log('| operation | netlink p50 ms | p10–p90 | `ip` p50 ms | ratio | target |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const { name, a, b, target } of rows) {
  console.log(
    `| ${name} | ${f(a.median)} | ${f(a.p10)}–${f(a.p90)} | ${b ? f(b.median) : '–'} | ${b ? `${(b.median / a.median).toFixed(0)}×` : '–'} | ${target ?? ''} |`,
  );
}
