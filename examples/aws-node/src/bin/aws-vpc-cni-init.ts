/**
 * `aws-vpc-cni-init`: what the reference's init container does. Installs the `aws-cni` and `egress-cni` plugins
 * (one file each) into HOST_CNI_BIN_PATH, with koffi beside them for their netlink paths, and the core plugins
 * the conflist chains (`portmap`, `bandwidth`, `loopback`, `host-local`); then applies the init sysctls:
 * `rp_filter=2` on the primary interface (found by the IMDS MAC), `tcp_early_demux`, `ip_forward=1`, with
 * `ENABLE_IPv6` IPv6 on, and with `ENABLE_IPv6` or `ENABLE_V6_EGRESS` IPv6 forwarding and `accept_ra=2` on the
 * primary interface (the reference's `configureIPv6Settings`). The command line only
 * takes `--help` and `--version`; anything else is refused (exit 2) before anything is installed.
 */
import { chmod, cp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createImdsNodeMetadata, ImdsClient } from '@vpc-cni-kit/eni-manager';
import { open, sysctlWrite } from '@vpc-cni-kit/netlink';
import { answerCommandLine } from '@vpc-cni-kit/command-line';
import { replaceFileSync } from '@vpc-cni-kit/regular-file';
import { readCommandLine } from '../cli/command-line.js';
import { CORE_PLUGINS, executable, findCorePlugins } from '../cli/core-plugins.js';
import { checkSysctls, initSysctls, readInitConfig, type SysctlWrite } from '../cli/init-plan.js';
import { describeStartFailure } from '../cli/start-failure.js';
import { makeDirectories } from '../fs/make-directories.js';
import { programVersion } from '../version.js';

const USAGE = `Usage: aws-vpc-cni-init [--help] [--version]

The aws-node init step (run once per node start, before the daemon, as the reference's init container):
installs aws-cni, egress-cni and the core plugins the conflist chains (${CORE_PLUGINS.join(', ')}) into
HOST_CNI_BIN_PATH (default /host/opt/cni/bin), then sets rp_filter=2 on the primary interface (found through
IMDS), tcp_early_demux (0 when DISABLE_TCP_EARLY_DEMUX=true) and ip_forward=1. With ENABLE_IPv6=true: IPv6 on
(all/disable_ipv6=0); with ENABLE_IPv6 or ENABLE_V6_EGRESS: all/forwarding=1 and accept_ra=2 on the primary
interface (it keeps learning its IPv6 default route while forwarding).

The core plugins are taken from AWS_NODE_CORE_PLUGINS_DIR, else from core-plugins/ beside this program (the
container image's layout), else from /usr/lib/cni (Debian's containernetworking-plugins).
AWS_EC2_METADATA_SERVICE_ENDPOINT points IMDS elsewhere.

Options:
  -h, --help     print this help and exit
  -v, --version  print the version and exit

Exit status: 0 done, 1 failed (one line on stderr says why), 2 bad command line.
`;

async function installFile(src: string, dst: string, mode: number): Promise<void> {
  // The reference's copy semantics (a temp file beside <dst> renamed over it, then chmod), with a temp file that
  // is this process's own and created exclusively: the reference's fixed <dst>.tmp, opened for writing, waits
  // for ever on a FIFO left there and writes through a symbolic link to wherever it points.
  replaceFileSync(dst, await readFile(src), { mode });
  await chmod(dst, mode);
}

/** A plugin executable this build ships: the single executable application if built, else the launcher. */
async function pluginExecutable(
  name: 'aws-cni' | 'egress-cni',
): Promise<{ kind: 'single-executable' | 'launcher'; path: string }> {
  const sea = join(__dirname, name);
  if (await executable(sea)) return { kind: 'single-executable', path: sea };
  return { kind: 'launcher', path: join(__dirname, `${name}.cjs`) };
}

async function main(env: NodeJS.ProcessEnv): Promise<void> {
  const config = readInitConfig(env);
  // Everything that can fail for want of the environment (the settings, IMDS, the core plugins, the primary
  // interface, each sysctl to write) is looked at before anything is installed or set, so a failed init leaves
  // the node as it was.
  const imdsEndpoint = env['AWS_EC2_METADATA_SERVICE_ENDPOINT'];
  const metadata = createImdsNodeMetadata(new ImdsClient(imdsEndpoint ? { endpoint: imdsEndpoint } : {}));
  const node = await metadata.discoverNode();
  const corePlugins = await findCorePlugins(
    [config.corePluginsDir ?? join(__dirname, 'core-plugins'), '/usr/lib/cni'],
    config.binDir,
  );
  const handle = await open();
  let primary: string;
  try {
    const link = (await handle.linkList()).find((l) => l.address?.toLowerCase() === node.primaryMac);
    if (link === undefined) throw new Error(`no interface has the primary ENI's MAC ${node.primaryMac}`);
    primary = link.name;
  } finally {
    handle.close();
  }
  const sysctls = checkSysctls(initSysctls(primary, config));
  await install(config.binDir, corePlugins);
  configureNode(primary, sysctls);
}

/** Installs aws-cni, egress-cni, koffi and the core plugins into `binDir`. */
async function install(binDir: string, corePlugins: Awaited<ReturnType<typeof findCorePlugins>>): Promise<void> {
  makeDirectories(binDir);
  // The single executable (Node and the program in one file: nothing needed from the host) when this build
  // has one, else the launcher, which needs Node on the runtime's PATH.
  const plugin = await pluginExecutable('aws-cni');
  for (const name of ['aws-cni', 'egress-cni'] as const) {
    const executable = name === 'aws-cni' ? plugin : await pluginExecutable(name);
    await installFile(executable.path, join(binDir, name), 0o755);
    // A launcher's code cache would only be stale beside the single executable.
    if (executable.kind === 'single-executable') await rm(join(binDir, `${name}.v8cache`), { force: true });
  }
  // koffi (and its prebuilt native module, a sibling @koromix/koffi-<platform> package) in node_modules
  // beside the plugins, where Node's resolution from the plugin file finds it. aws-cni loads it only on its rare
  // paths (DEL while the daemon is down, CHECK); egress-cni on every enabled ADD and DEL.
  const require = createRequire(__filename);
  const koffiDir = dirname(require.resolve('koffi'));
  const modules = join(binDir, 'node_modules');
  await cp(koffiDir, join(modules, 'koffi'), { recursive: true });
  const scope = join(koffiDir, '..', '@koromix');
  for (const entry of await readdir(scope).catch(() => [] as string[])) {
    if (entry.startsWith(`koffi-${process.platform}`))
      await cp(join(scope, entry), join(modules, '@koromix', entry), { recursive: true });
  }
  for (const plugin of corePlugins) await installFile(plugin.path, join(binDir, plugin.name), 0o755);
  const from = [...new Set(corePlugins.map((p) => dirname(p.path)))];
  process.stdout.write(
    `installed aws-cni and egress-cni (${plugin.kind})${corePlugins.length > 0 ? ` and ${corePlugins.map((p) => p.name).join(', ')} (from ${from.join(', ')})` : ''} into ${binDir}\n`,
  );
}

/** The node's sysctls (checked by {@link checkSysctls}): rp_filter, forwarding, early demux, IPv6 when asked. */
function configureNode(primary: string, sysctls: readonly SysctlWrite[]): void {
  for (const w of sysctls) sysctlWrite(w.key, w.value);
  process.stdout.write(`set rp_filter=2 on ${primary}\n`);
  if (sysctls.some((w) => w.key === `net/ipv6/conf/${primary}/accept_ra`))
    process.stdout.write(`set IPv6 forwarding=1 and accept_ra=2 on ${primary}\n`);
}

const answered = answerCommandLine(
  readCommandLine(process.argv.slice(2)),
  { program: 'aws-vpc-cni-init', usage: USAGE, version: programVersion(process.env) },
  { stdout: (s) => process.stdout.write(s), stderr: (s) => process.stderr.write(s) },
);
if (answered !== undefined) process.exitCode = answered;
else
  main(process.env).catch((e: unknown) => {
    const line = describeStartFailure(e, { imdsEndpoint: process.env['AWS_EC2_METADATA_SERVICE_ENDPOINT'] });
    process.stderr.write(`aws-vpc-cni-init: ${line}\n`);
    process.exitCode = 1;
  });
