/**
 * The `egress-cni` binary: the reference's chained egress plugin (IPv4 egress for IPv6 pods, IPv6 egress for
 * IPv4 pods). Bundled like aws-cni; VERSION and a disabled entry load neither netlink nor koffi.
 */
import { existsSync } from 'node:fs';
import { type CommandContext, findPlugin, invokePlugin, pluginMain } from '@vpc-cni-kit/cni-spec';
import { openPluginLog } from '../plugin/plugin-log.js';
import { type EgressIpam, type EgressKernel, egressHandlers } from './handlers.js';

/** Replaced at bundle time with the package version. */
declare const __AWS_CNI_VERSION__: string | undefined;

/** host-local (or whatever `ipam.type` names) with this process's stdin and `CNI_*`. */
function delegate(command: 'ADD' | 'DEL' | 'CHECK', ctx: CommandContext, pluginPath: string) {
  return invokePlugin({
    pluginPath,
    command,
    config: ctx.config.raw,
    containerId: ctx.env.containerId,
    netns: ctx.env.netns,
    ifname: ctx.env.ifname,
    args: process.env['CNI_ARGS'] ?? '',
    cniPath: ctx.env.path,
    env: process.env,
  });
}

const ipam: EgressIpam = {
  find: (ctx, type) => findPlugin(type, ctx.env.path),
  async add(ctx, plugin) {
    const { result } = await delegate('ADD', ctx, plugin);
    if (result === undefined) throw new Error(`IPAM plugin ${plugin} printed no result`);
    return result;
  },
  async del(ctx, plugin) {
    await delegate('DEL', ctx, plugin);
  },
  async check(ctx, plugin) {
    await delegate('CHECK', ctx, plugin);
  },
};

async function kernel(): Promise<EgressKernel> {
  const [netlink, snat, plumbing] = await Promise.all([
    import('@vpc-cni-kit/netlink'),
    import('@vpc-cni-kit/iptables-snat'),
    import('./plumbing.js'),
  ]);
  return {
    open(podNetns) {
      if (!existsSync(podNetns)) return undefined;
      const host = netlink.openSync();
      let pod: ReturnType<typeof netlink.openSync>;
      try {
        pod = netlink.openSync({ netns: podNetns });
      } catch (e) {
        host.close();
        throw e;
      }
      return {
        host,
        pod,
        podNetns,
        close() {
          host.close();
          pod.close();
        },
      };
    },
    plumbing,
    snat,
    tools: { runner: snat.processRunner() },
  };
}

void pluginMain(
  egressHandlers({
    ipam,
    kernel,
    // Web Crypto's generator: a static `node:crypto` import would load at every start, VERSION included.
    hostVethName: () =>
      `veth${Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(4))).toString('hex')}`,
    openLog: (file, level) => openPluginLog(file, level),
  }),
  {
    about:
      `egress-cni: IPv4/IPv6 egress for AWS VPC CNI pods (vpc-cni-kit) ${typeof __AWS_CNI_VERSION__ === 'string' ? __AWS_CNI_VERSION__ : ''}`.trim(),
  },
);
