// Builds this repository's container images without a Docker engine, from Debian's tools and this build:
//   mmdebstrap  a Debian 12 root file system with iptables (nft and legacy), nftables and iproute2
//   umoci       OCI images: that root file system and Node as the shared base layers, the program as the last
//   skopeo      the same image as a docker-archive (for `ctr images import`, `docker load`, `podman load`)
//
// Two images, one base. Both start from the same two layers, byte for byte (the same digests): Debian, and
// Node at /usr/local/bin/node (this machine's node binary: the programs need Node >= 20.19, Debian 12 ships 18).
// The base is built once and cached in DIR (keyed by its package list and the Node version), so a second image,
// or a rebuild after `npm run build`, costs one application layer; a node that runs both pulls the base once.
//   aws-node                 examples/aws-node's dist/bin at /app/dist/bin (the daemon, the init step, the health
//                            probe, aws-cni and egress-cni each as the single executable and the launcher), the
//                            core CNI plugins from Debian's containernetworking-plugins in /app/dist/bin/core-plugins
//                            (where aws-vpc-cni-init looks), and the daemon's three external dependencies with
//                            theirs in /app/node_modules; command /app/dist/bin/aws-node.cjs.
//   vpc-resource-controller  examples/vpc-resource-controller's program (one bundled file and its lazily loaded
//                            chunks) at /app/dist/bin; entrypoint that program, user 65534 (nobody).
//
//   node deploy/image/build.mjs [--image aws-node|vpc-resource-controller] [--out DIR] [--tag TAG]
//                                                     (root; after `npm run build`; default image aws-node)
// Prints the outputs, their sizes and the seconds taken as JSON. The first build downloads Debian packages (about
// 100 s here); later builds of either image reuse the cached base.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandLine } from '../../scripts/lib/cli.mjs';

const { values } = commandLine(import.meta.url, {
  summary:
    "Builds one of this repository's container images (root; after `npm run build`) with mmdebstrap, umoci and skopeo, and prints what it wrote as JSON.",
  options: {
    image: {
      type: 'string',
      choices: ['aws-node', 'vpc-resource-controller'],
      default: 'aws-node',
      description: 'which image',
    },
    out: {
      type: 'string',
      value: 'DIR',
      description: 'output and cache directory (default node_modules/.cache/vck-image)',
    },
    tag: { type: 'string', value: 'TAG', default: 'dev', description: "the image's tag" },
  },
});

const repo = fileURLToPath(new URL('../..', import.meta.url));

/**
 * What goes into each image's application layer. `programs` must exist in the package's dist/bin (each with
 * whatever it loads: files and directories of dist/bin whose names start with one of `include`); `external`
 * are the npm packages the programs require at run time, copied with their dependency closure.
 */
const IMAGES = {
  'aws-node': {
    packageDir: 'examples/aws-node',
    programs: [
      'aws-node.cjs',
      'aws-vpc-cni-init.cjs',
      'grpc-health-probe.cjs',
      'aws-cni.cjs',
      'aws-cni',
      'egress-cni.cjs',
      'egress-cni',
    ],
    include: ['aws-node', 'aws-vpc-cni-init', 'grpc-health-probe', 'aws-cni', 'egress-cni'],
    external: ['@grpc/grpc-js', 'prom-client', 'koffi'],
    corePlugins: ['portmap', 'bandwidth', 'loopback', 'host-local'],
    config: ['--config.cmd=/app/dist/bin/aws-node.cjs'],
  },
  'vpc-resource-controller': {
    packageDir: 'examples/vpc-resource-controller',
    programs: ['vpc-resource-controller.cjs'],
    include: ['vpc-resource-controller'],
    external: [],
    corePlugins: [],
    config: ['--config.entrypoint=/app/dist/bin/vpc-resource-controller.cjs', '--config.user=65534:65534'],
  },
};

function fail(message) {
  process.stderr.write(`image: ${message}\n`);
  process.exit(1);
}

const out = values.out ?? join(repo, 'node_modules/.cache/vck-image');
const { tag, image: name } = values;

/** Debian packages of the base layer, beyond the `essential` set. */
const PACKAGES = ['iptables', 'nftables', 'iproute2', 'libstdc++6', 'ca-certificates'];

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (r.error) fail(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (${r.status}): ${(r.stderr || r.stdout).trim()}`);
  return r.stdout;
}

/** A tar of `dir`'s contents that depends on nothing but those contents (names sorted, owner root, time 0). */
function layerTar(dir, file) {
  run('tar', [
    '--sort=name',
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--mtime=@0',
    '-C',
    dir,
    '-cf',
    file,
    '.',
  ]);
}

const image = IMAGES[name];
if (image === undefined)
  fail(`unknown image '${name}' (hint: --image ${Object.keys(IMAGES).join(' or --image ')})`);
if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag)) fail(`'${tag}' is not a valid image tag`);
for (const tool of ['mmdebstrap', 'umoci', 'skopeo'])
  if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
    fail(`${tool} is not installed (Debian package ${tool}; see scripts/system-packages.txt)`);
const packageDir = join(repo, image.packageDir);
for (const file of image.programs)
  if (!existsSync(join(packageDir, 'dist/bin', file)))
    fail(`${image.packageDir}/dist/bin/${file} is missing: run npm run build first`);
for (const p of image.corePlugins)
  if (!existsSync(join('/usr/lib/cni', p)))
    fail(`/usr/lib/cni/${p} is missing (containernetworking-plugins)`);

mkdirSync(out, { recursive: true });
const started = performance.now();

// 1. The Debian root file system, cached by its package list.
const debianKey = createHash('sha256')
  .update(`bookworm ${PACKAGES.join(',')}`)
  .digest('hex')
  .slice(0, 12);
const debianTar = join(out, `debian-base-${debianKey}.tar`);
if (!existsSync(debianTar)) {
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
    `${debianTar}.tmp-${process.pid}`,
    ...(sources ? [sources] : []),
  ]);
  renameSync(`${debianTar}.tmp-${process.pid}`, debianTar);
}

// 2. The base image both images start from: the Debian layer and the Node layer, cached as an OCI layout (tag
// `base`) keyed by the Debian tar and the Node version. Built aside and renamed into place, so a concurrent build
// never sees half of one.
const nodeKey = `${process.version}-${process.arch}-${statSync(process.execPath).size}`;
const baseLayout = join(out, `base-${debianKey}-${nodeKey}`);
if (!existsSync(baseLayout)) {
  const tmp = `${baseLayout}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  run('umoci', ['init', '--layout', tmp]);
  run('umoci', ['new', '--image', `${tmp}:base`]);
  const history = (what) => [
    '--history.author=vpc-cni-kit',
    `--history.created_by=deploy/image/build.mjs: ${what}`,
  ];
  run('umoci', [
    'raw',
    'add-layer',
    ...history(`Debian bookworm + ${PACKAGES.join(' ')}`),
    '--image',
    `${tmp}:base`,
    debianTar,
  ]);
  const nodeTree = join(out, `node-${process.pid}`);
  rmSync(nodeTree, { recursive: true, force: true });
  mkdirSync(join(nodeTree, 'usr/local/bin'), { recursive: true });
  cpSync(process.execPath, join(nodeTree, 'usr/local/bin/node'));
  layerTar(nodeTree, `${nodeTree}.tar`);
  run('umoci', [
    'raw',
    'add-layer',
    ...history(`Node ${process.version}`),
    '--image',
    `${tmp}:base`,
    `${nodeTree}.tar`,
  ]);
  rmSync(nodeTree, { recursive: true, force: true });
  rmSync(`${nodeTree}.tar`, { force: true });
  try {
    renameSync(tmp, baseLayout);
  } catch {
    rmSync(tmp, { recursive: true, force: true }); // another build put the same base there first
  }
}

// 3. The application tree: /app/dist/bin (and /app/node_modules for external dependencies).
const work = join(out, name);
const app = join(work, 'app-rootfs');
rmSync(app, { recursive: true, force: true });
const bin = join(app, 'app/dist/bin');
mkdirSync(bin, { recursive: true });
for (const entry of readdirSync(join(packageDir, 'dist/bin'))) {
  if (entry.endsWith('.map') || entry.endsWith('.v8cache')) continue;
  if (!image.include.some((prefix) => entry.startsWith(prefix))) continue;
  cpSync(join(packageDir, 'dist/bin', entry), join(bin, entry), {
    recursive: true,
    filter: (s) => !s.endsWith('.map'),
  });
}
if (image.corePlugins.length > 0) {
  mkdirSync(join(bin, 'core-plugins'));
  for (const p of image.corePlugins) cpSync(join('/usr/lib/cni', p), join(bin, 'core-plugins', p));
}
const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
writeFileSync(
  join(app, 'app/package.json'),
  `${JSON.stringify({ name: pkg.name, version: pkg.version, private: true, type: 'commonjs' }, null, 2)}\n`,
);
// The dependency closure of the externals, from the workspace's hoisted node_modules (package-lock's versions).
const copied = new Set();
const copyPackage = (dep, from) => {
  if (copied.has(dep)) return;
  let dir = from;
  while (!existsSync(join(dir, 'node_modules', dep, 'package.json'))) {
    if (dir === dirname(dir)) return; // an optional dependency for another platform
    dir = dirname(dir);
  }
  const src = join(dir, 'node_modules', dep);
  copied.add(dep);
  cpSync(src, join(app, 'app/node_modules', dep), { recursive: true, dereference: true });
  const manifest = JSON.parse(readFileSync(join(src, 'package.json'), 'utf8'));
  for (const d of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies }))
    copyPackage(d, src);
};
for (const dep of image.external) copyPackage(dep, packageDir);

// 4. The OCI image: a copy of the base layout, the application layer, the configuration.
const layout = join(work, 'oci');
rmSync(layout, { recursive: true, force: true });
cpSync(baseLayout, layout, { recursive: true });
layerTar(app, `${app}.tar`);
run('umoci', [
  'raw',
  'add-layer',
  '--history.author=vpc-cni-kit',
  `--history.created_by=deploy/image/build.mjs: ${image.packageDir} ${pkg.version}`,
  '--image',
  `${layout}:base`,
  '--tag',
  tag,
  `${app}.tar`,
]);
rmSync(`${app}.tar`, { force: true });
run('umoci', [
  'config',
  '--image',
  `${layout}:${tag}`,
  '--no-history',
  '--config.env=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  '--config.workingdir=/app',
  ...image.config,
  `--config.label=org.opencontainers.image.title=${name}`,
  `--config.label=org.opencontainers.image.version=${pkg.version}`,
  '--author=vpc-cni-kit',
]);
run('umoci', ['rm', '--image', `${layout}:base`]);
run('umoci', ['gc', '--layout', layout]);

// 5. The docker-archive.
const imageName = `localhost/vpc-cni-kit/${name}:${tag}`;
const archive = join(work, `${name}.tar`);
rmSync(archive, { force: true });
run('skopeo', ['copy', '--quiet', `oci:${layout}:${tag}`, `docker-archive:${archive}:${imageName}`]);

const du = (p) => Number(run('du', ['-sb', p]).split('\t')[0]);
const mib = (n) => `${(n / 2 ** 20).toFixed(1)} MiB`;
const manifestOf = (dir, ref) => {
  const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8'));
  const entry = index.manifests.find((m) => m.annotations?.['org.opencontainers.image.ref.name'] === ref);
  const blob = (digest) => JSON.parse(readFileSync(join(dir, 'blobs', ...digest.split(':')), 'utf8'));
  return blob(entry.digest);
};
const layers = manifestOf(layout, tag).layers;
const baseLayers = manifestOf(baseLayout, 'base').layers.map((l) => l.digest);
const report = {
  image: imageName,
  ociLayout: layout,
  dockerArchive: archive,
  /** The layers' digests; the first two are the shared base (Debian, Node), the same in every image. */
  layers: layers.map((l) => ({ digest: l.digest, size: mib(l.size), base: baseLayers.includes(l.digest) })),
  sizes: {
    ociLayout: mib(du(layout)),
    dockerArchive: mib(statSync(archive).size),
    uncompressedRootfs: mib(statSync(debianTar).size + statSync(process.execPath).size + du(app)),
    applicationLayerUncompressed: mib(du(app)),
    applicationLayerCompressed: mib(layers.at(-1).size),
  },
  seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
};
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
