// Builds the aws-node container image without a Docker engine, from Debian's tools and this repository's build:
//   mmdebstrap  a Debian 12 root file system with iptables (nft and legacy), nftables and iproute2
//   umoci       the OCI image: that root file system as one layer, this build as a second, the configuration
//   skopeo      the same image as a docker-archive (for `ctr images import`, `docker load`, `podman load`)
// The image holds Node (this machine's node binary: the daemon needs Node 20, Debian 12 ships 18),
// examples/aws-node's dist/bin at /app/dist/bin (the daemon, the init step, the health probe, aws-cni and
// egress-cni each as the single executable and the launcher), the core CNI plugins from Debian's containernetworking-plugins in
// /app/dist/bin/core-plugins (where aws-vpc-cni-init looks), and the daemon's three external dependencies
// with theirs in /app/node_modules.
//
//   node deploy/image/build.mjs [--out DIR] [--tag TAG]      (root; after `npm run build`)
// Prints the outputs and their sizes. The base root file system is cached in DIR (keyed by its package list):
// the first build downloads Debian packages (about 100 s here), later ones reuse it.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const packageDir = join(repo, 'examples/aws-node');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const out = arg('--out', join(repo, 'node_modules/.cache/vck-image'));
const tag = arg('--tag', 'dev');
const imageName = `localhost/vpc-cni-kit/aws-node:${tag}`;

/** Debian packages of the base layer, beyond the `essential` set. */
const PACKAGES = ['iptables', 'nftables', 'iproute2', 'libstdc++6', 'ca-certificates'];
/** The daemon's (and the init step's) run-time dependencies not bundled into dist/bin. */
const EXTERNAL = ['@grpc/grpc-js', 'prom-client', 'koffi'];
const CORE_PLUGINS = ['portmap', 'bandwidth', 'loopback', 'host-local'];

function fail(message) {
  process.stderr.write(`image: ${message}\n`);
  process.exit(1);
}

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (r.error) fail(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (${r.status}): ${(r.stderr || r.stdout).trim()}`);
  return r.stdout;
}

for (const tool of ['mmdebstrap', 'umoci', 'skopeo'])
  if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
    fail(`${tool} is not installed (Debian package ${tool}; see scripts/system-packages.txt)`);
for (const file of [
  'aws-node.cjs',
  'aws-vpc-cni-init.cjs',
  'grpc-health-probe.cjs',
  'aws-cni.cjs',
  'aws-cni',
  'egress-cni.cjs',
  'egress-cni',
])
  if (!existsSync(join(packageDir, 'dist/bin', file)))
    fail(`dist/bin/${file} is missing: run npm run build first`);
for (const p of CORE_PLUGINS)
  if (!existsSync(join('/usr/lib/cni', p)))
    fail(`/usr/lib/cni/${p} is missing (containernetworking-plugins)`);

mkdirSync(out, { recursive: true });
const started = performance.now();

// 1. The Debian base, cached by its package list.
const baseKey = createHash('sha256')
  .update(`bookworm ${PACKAGES.join(',')}`)
  .digest('hex')
  .slice(0, 12);
const baseTar = join(out, `debian-base-${baseKey}.tar`);
if (!existsSync(baseTar)) {
  const sources = ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list'].find(existsSync);
  run('mmdebstrap', [
    '--quiet',
    '--variant=essential',
    '--format=tar',
    `--include=${PACKAGES.join(',')}`,
    ...['/usr/share/man/*', '/usr/share/doc/*', '/usr/share/locale/*', '/usr/share/info/*'].map(
      (p) => `--dpkgopt=path-exclude=${p}`,
    ),
    'bookworm',
    `${baseTar}.tmp`,
    ...(sources ? [sources] : []),
  ]);
  execFileSync('mv', [`${baseTar}.tmp`, baseTar]);
}

// 2. The application tree: /app/dist/bin, /app/node_modules, /usr/local/bin/node.
const app = join(out, 'app-rootfs');
rmSync(app, { recursive: true, force: true });
const bin = join(app, 'app/dist/bin');
mkdirSync(bin, { recursive: true });
for (const entry of readdirSync(join(packageDir, 'dist/bin'))) {
  if (entry.endsWith('.map') || entry.endsWith('.v8cache') || entry.startsWith('demo')) continue;
  cpSync(join(packageDir, 'dist/bin', entry), join(bin, entry), {
    recursive: true,
    filter: (s) => !s.endsWith('.map'),
  });
}
mkdirSync(join(bin, 'core-plugins'));
for (const p of CORE_PLUGINS) cpSync(join('/usr/lib/cni', p), join(bin, 'core-plugins', p));
const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
writeFileSync(
  join(app, 'app/package.json'),
  `${JSON.stringify({ name: pkg.name, version: pkg.version, private: true, type: 'commonjs' }, null, 2)}\n`,
);
// The dependency closure of the externals, from the workspace's hoisted node_modules (package-lock's versions).
const copied = new Set();
const copyPackage = (name, from) => {
  if (copied.has(name)) return;
  let dir = from;
  while (!existsSync(join(dir, 'node_modules', name, 'package.json'))) {
    if (dir === dirname(dir)) return; // an optional dependency for another platform
    dir = dirname(dir);
  }
  const src = join(dir, 'node_modules', name);
  copied.add(name);
  cpSync(src, join(app, 'app/node_modules', name), { recursive: true, dereference: true });
  const manifest = JSON.parse(readFileSync(join(src, 'package.json'), 'utf8'));
  for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies }))
    copyPackage(dep, src);
};
for (const name of EXTERNAL) copyPackage(name, packageDir);
mkdirSync(join(app, 'usr/local/bin'), { recursive: true });
cpSync(process.execPath, join(app, 'usr/local/bin/node'));

// 3. The OCI image: base layer, application layer, configuration.
const layout = join(out, 'oci');
const bundle = join(out, 'bundle');
rmSync(layout, { recursive: true, force: true });
rmSync(bundle, { recursive: true, force: true });
run('umoci', ['init', '--layout', layout]);
run('umoci', ['new', '--image', `${layout}:${tag}`]);
run('umoci', ['unpack', '--image', `${layout}:${tag}`, bundle]);
run('tar', ['-xf', baseTar, '-C', join(bundle, 'rootfs')]);
run('umoci', ['repack', '--image', `${layout}:${tag}`, bundle]);
cpSync(app, join(bundle, 'rootfs'), { recursive: true });
run('umoci', ['repack', '--image', `${layout}:${tag}`, bundle]);
run('umoci', [
  'config',
  '--image',
  `${layout}:${tag}`,
  '--config.env=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  '--config.workingdir=/app',
  '--config.cmd=/app/dist/bin/aws-node.cjs',
  '--config.label=org.opencontainers.image.title=aws-node',
  `--config.label=org.opencontainers.image.version=${pkg.version}`,
  '--author=vpc-cni-kit',
]);
rmSync(bundle, { recursive: true, force: true });

// 4. The docker-archive.
const archive = join(out, 'aws-node.tar');
rmSync(archive, { force: true });
run('skopeo', ['copy', '--quiet', `oci:${layout}:${tag}`, `docker-archive:${archive}:${imageName}`]);

const du = (p) => Number(run('du', ['-sb', p]).split('\t')[0]);
const mib = (n) => `${(n / 2 ** 20).toFixed(1)} MiB`;
const rootfsBytes = statSync(baseTar).size + du(app);
const report = {
  image: imageName,
  ociLayout: layout,
  dockerArchive: archive,
  sizes: {
    ociLayout: mib(du(layout)),
    dockerArchive: mib(statSync(archive).size),
    uncompressedRootfs: mib(rootfsBytes),
    applicationLayerUncompressed: mib(du(app)),
  },
  seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
};
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
