// Full and no-op SNAT/connmark reconcile through @vpc-cni-kit/iptables-snat, against bare tool runs of the
// same work in the same run (one `iptables-restore --noflush` of the rendered rules; one `iptables-save`).
// SNAT rules do not grow with pods, so "250 pods" changes nothing here; the VPC has 5 CIDRs and 3 exclusions.
// Works only inside one scratch namespace it creates and deletes. Needs root, iptables/nft and a build:
//   npx turbo run build --filter=@vpc-cni-kit/iptables-snat && node benchmarks/iptables-snat/reconcile.mjs
// An optional first argument sets the number of timed iterations (default 20).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  planSnat,
  processRunner,
  reconcileSnat,
  renderIptables,
  renderNftTable,
  teardownSnat,
} from '@vpc-cni-kit/iptables-snat';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { summarize } from '../lib/timing.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    'Full and no-op SNAT/connmark reconcile through @vpc-cni-kit/iptables-snat, against bare iptables-restore and\n' +
    'iptables-save runs of the same work, in a scratch namespace (root). Build @vpc-cni-kit/iptables-snat first.',
  positionals: [{ name: 'runs', type: 'count', default: 20, min: 1, description: 'timed iterations' }],
});
const RUNS = args.runs;
const NS = `vckbs${randomBytes(3).toString('hex')}`;
const netnsPath = `/var/run/netns/${NS}`;
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const inNs = (file, args, input) =>
  execFileSync('nsenter', [`--net=${netnsPath}`, '--', file, ...args], {
    input: input ?? '',
    stdio: ['pipe', 'pipe', 'pipe'],
  });

execFileSync('ip', ['netns', 'add', NS]);
try {
  const tools = { runner: processRunner({ netnsPath }) };
  const results = {};
  for (const backend of ['nftables', 'iptables']) {
    const plan = planSnat({
      nodeIp: '10.0.0.9',
      primaryInterface: 'eth0',
      vpcCidrs: ['10.0.0.0/16', '10.1.0.0/16', '10.2.0.0/16', '100.64.0.0/10', '192.168.0.0/16'],
      excludeSnatCidrs: ['172.16.0.0/12', '198.18.0.0/15', '203.0.113.0/24'],
      connmarkBackend: backend,
    });
    const script = renderIptables(plan);
    const full = [];
    const noop = [];
    let processes = 0;
    for (let i = 0; i < RUNS + 2; i++) {
      await teardownSnat(tools);
      let t0 = process.hrtime.bigint();
      const r = await reconcileSnat(tools, plan);
      const f = ms(t0);
      processes = r.processes;
      t0 = process.hrtime.bigint();
      const n = await reconcileSnat(tools, plan);
      const o = ms(t0);
      if (n.changeSet.changes.length !== 0) throw new Error('no-op reconcile changed something');
      if (i >= 2) {
        full.push(f);
        noop.push(o);
      }
    }
    results[`full reconcile, ${backend} connmark (${processes} processes)`] = summarize(full);
    results[`no-op reconcile, ${backend} connmark`] = summarize(noop);
    if (backend === 'nftables') {
      const restore = [];
      const save = [];
      const nftFile = [];
      for (let i = 0; i < RUNS + 2; i++) {
        await teardownSnat(tools);
        let t0 = process.hrtime.bigint();
        inNs('iptables-restore', ['-w', '5', '--noflush'], script);
        const a = ms(t0);
        t0 = process.hrtime.bigint();
        inNs('iptables-save', ['-t', 'nat']);
        const b = ms(t0);
        t0 = process.hrtime.bigint();
        inNs('nft', ['-f', '-'], renderNftTable(plan.nft));
        const c = ms(t0);
        if (i >= 2) {
          restore.push(a);
          save.push(b);
          nftFile.push(c);
        }
      }
      results['baseline: one bare `iptables-restore --noflush` of the rules'] = summarize(restore);
      results['baseline: one bare `iptables-save -t nat`'] = summarize(save);
      results['baseline: one bare `nft -f` creating the connmark table'] = summarize(nftFile);
    }
  }
  await teardownSnat(tools);
  const base = results['baseline: one bare `iptables-restore --noflush` of the rules'].median;
  console.log(`${RUNS} runs; ${execFileSync('iptables', ['--version']).toString().trim()}\n`);
  console.log('| operation | median ms | p10–p90 ms | ratio to one bare restore |');
  console.log('| --- | --- | --- | --- |');
  for (const [name, s] of Object.entries(results)) {
    console.log(
      `| ${name} | ${s.median.toFixed(1)} | ${s.p10.toFixed(1)}–${s.p90.toFixed(1)} | ${(s.median / base).toFixed(2)}× |`,
    );
  }
} finally {
  execFileSync('ip', ['netns', 'del', NS]);
}
