// Shared pieces of the aws-node benchmarks: the cluster harness (bundled at start from tools/cluster-harness's
// source, which is not built for Node), the libcni runner, async process timing, Prometheus histogram
// quantiles, and a namespace-leak check. Root and Linux only.
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cleanEnv, summarize } from '../lib/timing.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '../..');
const require = createRequire(import.meta.url);

/** The built package's directory and its `dist/bin` (aws-node.cjs, aws-vpc-cni-init.cjs, aws-cni.cjs). */
export const packageDir = dirname(require.resolve('@vpc-cni-kit/aws-node/package.json'));
export const binDir = join(packageDir, 'dist/bin');

/**
 * A scratch directory for bundles built at benchmark start: under the repository's node_modules (ignored by
 * git), so their bare imports still resolve to the workspace packages and their dist.
 */
export function bundleScratch(label) {
  const base = join(repo, 'node_modules/.cache');
  mkdirSync(base, { recursive: true });
  return mkdtempSync(join(base, `vck-bench-${label}-`));
}

/**
 * The command-line options (scripts/lib/cli.mjs) of the benchmarks that start aws-node on a harness node:
 * the daemon's NODE_OPTIONS, and another build's dist/bin (the default is {@link binDir}).
 */
export const DAEMON_OPTIONS = {
  'daemon-node-options': {
    type: 'string',
    value: 'FLAGS',
    description:
      "start the daemon with these NODE_OPTIONS, written with '=' as they start with a dash: --daemon-node-options='--max-semi-space-size=1'",
  },
  'bin-dir': {
    type: 'string',
    value: 'DIR',
    description:
      "run aws-node, its init and aws-cni from another build's dist/bin, e.g. a saved copy (an A/B)",
  },
};

/** A short random tag for names this run creates (namespaces, directories). */
export const tag = randomBytes(3).toString('hex');

/** Milliseconds since an arbitrary origin, sub-millisecond resolution. */
export const now = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * Bundles tools/cluster-harness/src/cluster.ts (with its relative imports; every package stays external and
 * resolves to its built dist) and imports it. The bundle is removed once loaded.
 */
export async function loadClusterHarness() {
  const esbuild = await import('esbuild');
  const dir = bundleScratch('harness');
  try {
    const outfile = join(dir, 'cluster.mjs');
    await esbuild.build({
      entryPoints: [join(repo, 'tools/cluster-harness/src/cluster.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      conditions: ['@vpc-cni-kit/source'],
      outfile,
      logLevel: 'error',
    });
    return await import(pathToFileURL(outfile).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Builds the Go libcni runner (tools/libcni-runner, on Debian's libcni) into a scratch directory. */
export function buildLibcniRunner() {
  const dir = join('/tmp', `vckbench-${tag}`);
  mkdirSync(dir, { recursive: true });
  const out = join(dir, 'libcni-runner');
  const r = spawnSync('bash', [join(repo, 'tools/libcni-runner/build.sh'), out], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`libcni-runner build failed: ${r.stderr}`);
  return { runner: out, scratch: dir };
}

/** Runs a command (no shell) and resolves with its wall time; the event loop keeps turning meanwhile. */
export function timed(argv, { env = cleanEnv(), input } = {}) {
  return new Promise((resolve) => {
    const t0 = now();
    const child = execFile(
      argv[0],
      argv.slice(1),
      { env, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, timeout: 60_000 },
      (error, stdout, stderr) => {
        const ms = now() - t0;
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ ms, code, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin.end(input);
  });
}

/** The last JSON line the libcni runner printed: `{ ok, result }` or `{ ok: false, error }`. */
export function runnerOutcome(r) {
  try {
    return JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '');
  } catch {
    return { ok: false, error: { code: -1, msg: `no result: ${r.stderr || r.stdout}` } };
  }
}

/** libcni runner argv for one operation, run inside network namespace `hostNetns` via nsenter. */
export function libcniArgv(
  runner,
  hostNetns,
  command,
  { conflist, binDirs, cacheDir, netns, id, args = '' },
) {
  return [
    'nsenter',
    `--net=${hostNetns}`,
    runner,
    command,
    '-conflist',
    conflist,
    '-bin-dir',
    binDirs.join(':'),
    '-cache-dir',
    cacheDir,
    '-netns',
    netns,
    '-id',
    id,
    '-ifname',
    'eth0',
    '-args',
    args,
    '-cap-args',
    '',
  ];
}

/** Summaries with p99, in milliseconds. */
export function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  return { ...summarize(s), p99: s[Math.min(s.length - 1, Math.floor(0.99 * s.length))] };
}

/**
 * Markdown table rows: name, median, p10–p90, ratio against `base` (a median) — the Node floor unless `against`
 * names another baseline.
 */
export function ratioTable(rows, base, unit = 'ms', against = 'floor') {
  return [
    `| variant | median ${unit} | p10–p90 ${unit} | n | ratio to ${against} |`,
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      ([name, s]) =>
        `| ${name} | ${s.median.toFixed(1)} | ${s.p10.toFixed(1)}–${s.p90.toFixed(1)} | ${s.n} | ${(s.median / base).toFixed(2)}× |`,
    ),
  ].join('\n');
}

/**
 * Parses one Prometheus histogram (cumulative `_bucket` lines, optionally filtered by a label substring) and
 * returns its count and `histogram_quantile`-style quantiles (linear interpolation inside the bucket), in ms.
 */
export function histogram(text, name, labelFilter = '') {
  const buckets = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}_bucket{`) || !line.includes(labelFilter)) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    const value = Number(line.trim().split(/\s+/).at(-1));
    buckets.push({ le: le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), count: value });
  }
  buckets.sort((a, b) => a.le - b.le);
  const total = buckets.at(-1)?.count ?? 0;
  const quantile = (q) => {
    const rank = q * total;
    let prevLe = 0;
    let prevCount = 0;
    for (const b of buckets) {
      if (b.count >= rank) {
        if (!Number.isFinite(b.le)) return prevLe * 1000;
        const inBucket = b.count - prevCount;
        const frac = inBucket === 0 ? 1 : (rank - prevCount) / inBucket;
        return (prevLe + (b.le - prevLe) * frac) * 1000;
      }
      prevLe = b.le;
      prevCount = b.count;
    }
    return Number.NaN;
  };
  const bucketOf = (q) => buckets.find((b) => b.count >= q * total)?.le * 1000;
  return {
    count: total,
    buckets,
    p50: quantile(0.5),
    p99: quantile(0.99),
    p50Bucket: bucketOf(0.5),
    p99Bucket: bucketOf(0.99),
  };
}

/**
 * One histogram between two scrapes of the same series (`before`, `after`: metrics text): what was observed in
 * between, as {@link histogram} returns it.
 */
export function histogramDelta(before, after, name, labelFilter = '') {
  const h1 = histogram(after, name, labelFilter);
  const h0 = histogram(before, name, labelFilter);
  const text = h1.buckets
    .map(
      (b, k) =>
        `x_bucket{le="${Number.isFinite(b.le) ? b.le : '+Inf'}"} ${b.count - (h0.buckets[k]?.count ?? 0)}`,
    )
    .join('\n');
  return histogram(text, 'x');
}

/** Names of the network namespaces in /var/run/netns. */
export function netnsNames() {
  const r = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  return new Set(
    r.stdout
      .split('\n')
      .map((l) => l.split(' ')[0])
      .filter(Boolean),
  );
}

/**
 * The namespaces whose names contain one of `markers` (this run's tag, the virtual VPC's run id): what must be
 * gone after clean-up. Other people's namespaces on a shared machine never match.
 */
export function leakedNetns(markers) {
  return [...netnsNames()].filter((n) => markers.some((m) => m && n.includes(m)));
}

/** The pid of the `node` child of the `nsenter` process the harness spawned for a daemon. */
export function daemonPid(nsenterPid) {
  const r = spawnSync('pgrep', ['-P', String(nsenterPid)], { encoding: 'utf8' });
  const pid = Number(r.stdout.trim().split('\n')[0]);
  if (Number.isInteger(pid) && pid > 0) return pid;
  // nsenter may exec the command in place (no fork) when it needs no new PID namespace.
  return nsenterPid;
}

/** VmRSS (and VmHWM) of a process, in MiB. */
export async function rssMiB(pid) {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024, name: /^Name:\s+(\S+)/m.exec(status)?.[1] };
}

export { cleanEnv, summarize };

/**
 * One pod through libcni, timed: a fresh namespace, ADD then DEL of `conflist` with libcni (and every plugin)
 * in `hostNetns`, the namespace removed. Throws naming `label` when either fails. `created` tracks the
 * namespace while it exists (for the caller's clean-up). Returns the two durations in ms.
 */
export async function timePodAddDel(
  runner,
  hostNetns,
  { label, conflist, binDirs, cacheDir, env, seq, created },
) {
  const { netnsAdd, netnsDel } = await import('@vpc-cni-kit/netlink');
  const podNs = `vckbench-${tag}-p${seq}`;
  const id = `bench${tag}${String(seq).padStart(5, '0')}`;
  const podPath = netnsAdd(podNs);
  created.push(podNs);
  const common = {
    conflist,
    binDirs,
    cacheDir,
    netns: podPath,
    id,
    args: `IgnoreUnknown=1;K8S_POD_NAMESPACE=bench;K8S_POD_NAME=bench-${seq};K8S_POD_INFRA_CONTAINER_ID=${id}`,
  };
  const add = await timed(libcniArgv(runner, hostNetns, 'add', common), { env });
  const addOutcome = runnerOutcome(add);
  if (!addOutcome.ok) throw new Error(`${label} ADD failed: ${JSON.stringify(addOutcome.error)}`);
  const del = await timed(libcniArgv(runner, hostNetns, 'del', common), { env });
  const delOutcome = runnerOutcome(del);
  if (!delOutcome.ok) throw new Error(`${label} DEL failed: ${JSON.stringify(delOutcome.error)}`);
  netnsDel(podNs);
  created.splice(created.indexOf(podNs), 1);
  return { add: add.ms, del: del.ms };
}

/**
 * A benchmark's clean-up: deletes the namespaces still in `created`, closes the cluster, removes `scratch`,
 * and says whether any namespace named with one of `markers` is left behind.
 */
export async function tearDownRun({ created, cluster, scratch, markers }) {
  const { netnsDel } = await import('@vpc-cni-kit/netlink');
  for (const ns of [...created]) {
    try {
      netnsDel(ns);
    } catch {
      // already gone
    }
  }
  await cluster?.close();
  rmSync(scratch, { recursive: true, force: true });
  const leaked = leakedNetns(markers);
  console.log(
    leaked.length === 0 ? '\nclean-up: no namespace left behind' : `\nLEAKED namespaces: ${leaked.join(' ')}`,
  );
}
