/**
 * `aws-vpc-cni-init`: what the reference's init container does. Installs the `aws-cni` plugin (one file) into
 * HOST_CNI_BIN_PATH, with koffi beside it for the plugin's rare netlink paths, and applies the init sysctls:
 * `rp_filter=2` on the primary interface (found by the IMDS MAC), `tcp_early_demux`, and `ip_forward=1`.
 */
import { chmod, cp, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createImdsNodeMetadata, ImdsClient } from '@vpc-cni-kit/eni-manager';
import { open, sysctlWrite } from '@vpc-cni-kit/netlink';

async function installFile(src: string, dst: string, mode: number): Promise<void> {
  // The reference's copy semantics: <dst>.tmp, rename over <dst>, then chmod.
  const tmp = `${dst}.tmp`;
  await writeFile(tmp, await readFile(src));
  await rename(tmp, dst);
  await chmod(dst, mode);
}

async function main(): Promise<void> {
  const env = process.env;
  const binDir = env['HOST_CNI_BIN_PATH'] || '/host/opt/cni/bin';
  await mkdir(binDir, { recursive: true });
  await installFile(join(__dirname, 'aws-cni.cjs'), join(binDir, 'aws-cni'), 0o755);
  // koffi (and its prebuilt native module, a sibling @koromix/koffi-<platform> package) in node_modules
  // beside the plugin, where Node's resolution from the plugin file finds it. Only the plugin's rare paths
  // (DEL while the daemon is down, CHECK) load it.
  const require = createRequire(__filename);
  const koffiDir = dirname(require.resolve('koffi'));
  const modules = join(binDir, 'node_modules');
  await cp(koffiDir, join(modules, 'koffi'), { recursive: true });
  const scope = join(koffiDir, '..', '@koromix');
  for (const entry of await readdir(scope).catch(() => [] as string[])) {
    if (entry.startsWith(`koffi-${process.platform}`))
      await cp(join(scope, entry), join(modules, '@koromix', entry), { recursive: true });
  }
  process.stdout.write(`installed aws-cni into ${binDir}\n`);

  const imdsEndpoint = env['AWS_EC2_METADATA_SERVICE_ENDPOINT'];
  const metadata = createImdsNodeMetadata(new ImdsClient(imdsEndpoint ? { endpoint: imdsEndpoint } : {}));
  const node = await metadata.discoverNode();
  const handle = await open();
  try {
    const primary = (await handle.linkList()).find((l) => l.address?.toLowerCase() === node.primaryMac);
    if (primary === undefined) throw new Error(`no interface has the primary ENI's MAC ${node.primaryMac}`);
    sysctlWrite(`net/ipv4/conf/${primary.name}/rp_filter`, '2');
    // Pods are routed through the node: forwarding must be on. The reference leaves this to the node image
    // (the EKS AMI enables it); a node without it cannot carry pod traffic, so set it here.
    sysctlWrite('net/ipv4/ip_forward', '1');
    try {
      sysctlWrite('net/ipv4/tcp_early_demux', env['DISABLE_TCP_EARLY_DEMUX'] === 'true' ? '0' : '1');
    } catch {
      // absent on this kernel: the reference skips it too
    }
    process.stdout.write(`set rp_filter=2 on ${primary.name}\n`);
  } finally {
    handle.close();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`aws-vpc-cni-init: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
