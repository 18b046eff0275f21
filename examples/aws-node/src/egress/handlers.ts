import {
  CniError,
  CniErrorCode,
  type CommandContext,
  type PluginHandlers,
  type Result,
} from '@vpc-cni-kit/cni-spec';
import { parseIp } from '@vpc-cni-kit/ip-address';
import type { SnatTools } from '@vpc-cni-kit/iptables-snat';
import { type Logger, silentLogger } from '../log/logger.js';
import {
  type EgressConf,
  egressEnabled,
  egressIfname,
  readEgressConf,
  readEgressTeardown,
} from './net-conf.js';
import type { EgressAddress, EgressHandles, EgressVeth } from './plumbing.js';

/**
 * The delegated IPAM plugin (host-local), run as the reference runs it: the whole stdin, the same `CNI_*`.
 * `find` comes first, so a missing IPAM plugin fails the command before anything is touched; the others start
 * the plugin's process before they return their promise's first await, so the caller can load the kernel side
 * meanwhile.
 */
export interface EgressIpam {
  /** The IPAM plugin's executable for `ipam.type`, from `CNI_PATH`. */
  find(ctx: CommandContext, type: string): Promise<string>;
  /** IPAM ADD: the allocation's result. */
  add(ctx: CommandContext, plugin: string): Promise<Result>;
  /** IPAM DEL. */
  del(ctx: CommandContext, plugin: string): Promise<void>;
  /** IPAM CHECK. */
  check(ctx: CommandContext, plugin: string): Promise<void>;
}

/** The kernel work, loaded only when egress is enabled (netlink loads koffi's native module). */
export interface EgressKernel {
  /** Opens handles in the host's and the pod's namespaces; `undefined` when the pod's namespace is gone. */
  open(podNetns: string): (EgressHandles & { close(): void }) | undefined;
  /** The plumbing functions (plumbing.ts). */
  plumbing: typeof import('./plumbing.js');
  /** iptables-snat's egress functions. */
  snat: Pick<
    typeof import('@vpc-cni-kit/iptables-snat'),
    | 'addEgressSnat'
    | 'deleteEgressSnat'
    | 'egressChainName'
    | 'egressSnatInPlace'
    | 'planEgressSnat'
    | 'readEgressNat'
  >;
  /** How iptables/ip6tables are run (in the plugin's own namespace). */
  tools: SnatTools;
}

/** What egress-cni's handlers need, injected for tests. */
export interface EgressDeps {
  ipam: EgressIpam;
  /** Loads the kernel side (netlink, iptables-snat) on first use. */
  kernel: () => Promise<EgressKernel>;
  /** A host veth name: `veth` and 8 random hex digits, as the upstream plugins name theirs. */
  hostVethName: () => string;
  /** Opens the log named by the conflist. Default: none. */
  openLog?: (file: string, level: string) => Logger;
}

function chained(ctx: CommandContext): Result {
  if (ctx.config.prevResult === undefined)
    throw new CniError(CniErrorCode.InvalidNetworkConfig, 'must be called as a chained plugin');
  return ctx.config.prevResult;
}

/** The single address IPAM must give, as the reference requires it. */
function egressAddress(result: Result, family: 4 | 6): EgressAddress {
  const ips = result.ips ?? [];
  if (ips.length !== 1) {
    throw new CniError(
      CniErrorCode.Internal,
      ips.length === 0
        ? 'IPAM plugin returned zero IPs'
        : `IPAM plugin is expected to return 1 IP address, but returned ${ips.length} IPs`,
    );
  }
  const [only] = ips as [NonNullable<Result['ips']>[number]];
  const ip = only.address.split('/')[0] ?? '';
  if (parseIp(ip)?.family !== family)
    throw new CniError(CniErrorCode.Internal, `IPAM gave ${only.address} for IPv${family} egress`);
  return {
    cidr: only.address,
    ip,
    gateway: only.gateway,
    routes: (result.routes ?? []).map((r) => ({ dst: r.dst, gw: r.gw })),
  };
}

/**
 * egress-cni's commands, as the reference's: ADD (chained after aws-cni; `enabled` not `"true"` passes the
 * previous result through without reading the other keys; with egress on, a bad key fails before anything is
 * touched), DEL (idempotent and lenient: IPAM, the interface, the SNAT chain by its name, whatever else the
 * config holds) and CHECK (which the reference lacks: IPAM's CHECK, the interface, its routes, the host end and
 * the SNAT chain).
 */
export function egressHandlers(deps: EgressDeps): PluginHandlers {
  const logFor = (conf: Pick<EgressConf, 'pluginLogFile' | 'pluginLogLevel'>) =>
    deps.openLog?.(conf.pluginLogFile, conf.pluginLogLevel) ?? silentLogger;

  return {
    async add(ctx) {
      const prev = chained(ctx);
      if (!egressEnabled(ctx.config)) return prev;
      const conf = readEgressConf(ctx.config);
      const log = logFor(conf);
      const ipamType = conf.ipam?.type ?? '';
      const nodeIp = conf.nodeIp ?? '';
      log.debug('Received an Add request', {
        containerID: ctx.env.containerId,
        netns: ctx.env.netns,
        family: conf.family,
      });
      const ipamPlugin = await deps.ipam.find(ctx, ipamType);
      // host-local and iptables-save run while netlink loads koffi and opens its sockets.
      const allocation = deps.ipam.add(ctx, ipamPlugin);
      let kernel: EgressKernel | undefined;
      let handles: ReturnType<EgressKernel['open']>;
      let snat: Promise<unknown> | undefined;
      let veth: EgressVeth;
      try {
        kernel = await deps.kernel();
        const natRead = kernel.snat.readEgressNat(kernel.tools, conf.family);
        natRead.catch(() => {}); // handed to addEgressSnat below, or dropped by a failure before it
        handles = kernel.open(ctx.env.netns);
        if (handles === undefined)
          throw new CniError(CniErrorCode.Internal, `network namespace ${ctx.env.netns} not found`);
        const address = egressAddress(await allocation, conf.family);
        // The restore runs once the veth is plumbed.
        snat = kernel.snat.addEgressSnat(
          kernel.tools,
          {
            network: conf.network,
            containerId: ctx.env.containerId,
            podIp: address.ip,
            nodeIp,
            randomizeSnat: conf.randomizeSnat,
          },
          natRead,
        );
        snat.catch(() => {}); // awaited below; a plumbing failure must not leave it unhandled
        const hostIf = deps.hostVethName();
        if (conf.family === 4) {
          kernel.plumbing.enableIpv4Forwarding();
          veth = kernel.plumbing.plumbV4(handles, hostIf, conf.ifname, conf.mtu, address);
        } else {
          veth = kernel.plumbing.plumbV6(handles, hostIf, conf.ifname, ctx.env.ifname, conf.mtu, address);
        }
        await snat;
        log.info('egress set up', { podIp: address.ip, hostVeth: veth.hostIf });
      } catch (e) {
        log.error('egress ADD failed, rolling back', { error: e instanceof Error ? e.message : String(e) });
        await Promise.allSettled([allocation, snat]);
        await rollback(kernel, handles, conf, ctx, deps.ipam, ipamPlugin);
        handles?.close();
        throw e instanceof CniError
          ? e
          : new CniError(CniErrorCode.Internal, `egress ADD: ${e instanceof Error ? e.message : String(e)}`);
      }
      handles.close();
      // The previous result with the egress veth's two ends appended; its IPs are not reported.
      return {
        ...prev,
        interfaces: [
          ...(prev.interfaces ?? []),
          { name: veth.hostIf, mac: veth.hostMac },
          { name: veth.podIf, mac: veth.podMac, sandbox: ctx.env.netns },
        ],
      };
    },

    async del(ctx) {
      // Lenient: a value ADD would refuse must not keep this pod's allocation and chain on the node.
      const conf = readEgressTeardown(ctx.config);
      if (!conf.enabled) return;
      const log = logFor(conf);
      // IPAM's DEL, the chains' removal and the interface's (18 ms of kernel work) run side by side, and
      // each runs whatever the others do: a missing IPAM plugin is reported, after the rest is gone.
      const ipamType = conf.ipamType;
      const released =
        ipamType === undefined
          ? Promise.resolve()
          : deps.ipam.find(ctx, ipamType).then((plugin) =>
              deps.ipam.del(ctx, plugin).catch((e: unknown) => {
                throw new CniError(
                  CniErrorCode.Internal,
                  `running IPAM plugin failed: ${e instanceof Error ? e.message : String(e)}`,
                );
              }),
            );
      released.catch(() => {});
      if (ipamType === undefined) log.warn('no ipam.type in the config: no IPAM allocation to release');
      const kernel = await deps.kernel();
      const chains = conf.families.map((family) => ({
        family,
        chain: kernel.snat.egressChainName(conf.network, ctx.env.containerId, family),
      }));
      const unchained = Promise.all(
        chains.map(({ family, chain }) => kernel.snat.deleteEgressSnat(kernel.tools, chain, family)),
      );
      unchained.catch(() => {});
      const handles = ctx.env.netns === '' ? undefined : kernel.open(ctx.env.netns);
      try {
        if (handles !== undefined) {
          for (const family of conf.families)
            kernel.plumbing.removeEgressLink(handles.pod, egressIfname(family));
        }
      } finally {
        handles?.close();
      }
      const [ipam, snat] = await Promise.allSettled([released, unchained]);
      if (ipam.status === 'rejected') throw ipam.reason;
      if (snat.status === 'rejected') throw snat.reason;
      log.info('egress removed', { containerID: ctx.env.containerId, chains: chains.map((c) => c.chain) });
    },

    async check(ctx) {
      chained(ctx);
      if (!egressEnabled(ctx.config)) return;
      const conf = readEgressConf(ctx.config);
      await deps.ipam.check(ctx, await deps.ipam.find(ctx, conf.ipam?.type ?? ''));
      const kernel = await deps.kernel();
      const handles = kernel.open(ctx.env.netns);
      if (handles === undefined)
        throw new CniError(CniErrorCode.Internal, `check: network namespace ${ctx.env.netns} not found`);
      let podIp: string;
      try {
        podIp = kernel.plumbing.verifyEgress(handles, conf.ifname, conf.family);
      } finally {
        handles.close();
      }
      const base = {
        network: conf.network,
        containerId: ctx.env.containerId,
        podIp,
        nodeIp: conf.nodeIp ?? '',
        randomizeSnat: conf.randomizeSnat,
      };
      // `prng` is `--random-fully`, or `--random` on an iptables without it: either is in place. One read of
      // `nat` serves both.
      const plans = [true, false].map((randomFullySupported) =>
        kernel.snat.planEgressSnat({ ...base, randomFullySupported }),
      );
      const nat = kernel.snat.readEgressNat(kernel.tools, conf.family);
      for (const plan of plans) if (await kernel.snat.egressSnatInPlace(kernel.tools, plan, nat)) return;
      throw new CniError(CniErrorCode.Internal, `check: SNAT chain ${plans[0]?.chain} is not in place`);
    },
  };
}

/** Undoes a failed ADD as far as it got: the interface, the SNAT chain, the IPAM allocation. Never throws. */
async function rollback(
  kernel: EgressKernel | undefined,
  handles: EgressHandles | undefined,
  conf: EgressConf,
  ctx: CommandContext,
  ipam: EgressIpam,
  ipamPlugin: string,
): Promise<void> {
  const attempts: Array<() => unknown> = [
    () => handles !== undefined && kernel?.plumbing.removeEgressLink(handles.pod, conf.ifname),
    () =>
      kernel?.snat.deleteEgressSnat(
        kernel.tools,
        kernel.snat.egressChainName(conf.network, ctx.env.containerId, conf.family),
        conf.family,
      ),
    () => ipam.del(ctx, ipamPlugin),
  ];
  for (const attempt of attempts) {
    try {
      await attempt();
    } catch {
      // Best effort: the ADD's own error is what the runtime hears; its DEL retries the rest.
    }
  }
}
