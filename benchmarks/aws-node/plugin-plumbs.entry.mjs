// The alternative the ADR weighs, built only for the benchmark: an aws-cni that plumbs the pod itself, as the
// reference plugin does. ADD asks the daemon for an address only (PodPlumbing false), then loads koffi,
// @vpc-cni-kit/netlink and @vpc-cni-kit/routing-table and sets up the veth, addresses, routes and rules in this
// process; DEL releases the address, then removes the host routes and rules here. Bundled by plumbing.mjs the
// way the real plugin is (one minified CJS file, koffi external), from the package's own client code.
import { randomBytes } from 'node:crypto';
import { CniError, CniErrorCode, pluginMain } from '@vpc-cni-kit/cni-spec';
import { openSync } from '@vpc-cni-kit/netlink';
import {
  hostVethName,
  netlinkPortFactory,
  netlinkRoutingPort,
  setupPodNetwork,
  teardownPodNetwork,
} from '@vpc-cni-kit/routing-table';
import { daemonClient } from '../../examples/aws-node/src/plugin/daemon-client.ts';
import { readAwsCniConf } from '../../examples/aws-node/src/plugin/net-conf.ts';
import { buildAddResult } from '../../examples/aws-node/src/plugin/result.ts';

function common(ctx) {
  const a = ctx.env.args;
  return {
    K8S_POD_NAME: a.podName ?? '',
    K8S_POD_NAMESPACE: a.podNamespace ?? '',
    K8S_POD_INFRA_CONTAINER_ID: a.podInfraContainerId ?? '',
    IfName: ctx.env.ifname,
    NetworkName: ctx.config.name || 'aws-cni',
    ContainerID: ctx.env.containerId,
    ClientVersion: '',
  };
}

void pluginMain(
  {
    async add(ctx) {
      const conf = readAwsCniConf(ctx.config);
      const reply = await daemonClient(conf.ipamdSocket, 10_000).addNetwork({
        ...common(ctx),
        Netns: ctx.env.netns,
        PodPlumbing: false,
      });
      const ip = reply.IPAllocationMetadata[0];
      if (!reply.Success || ip === undefined) throw new CniError(CniErrorCode.TryAgainLater, 'no address');
      const a = ctx.env.args;
      const hostVeth = hostVethName(conf.vethPrefix, a.podNamespace ?? '', a.podName ?? '');
      const handle = openSync();
      try {
        const plan = await setupPodNetwork(
          {
            host: netlinkRoutingPort(handle),
            namespaces: netlinkPortFactory({ sync: true }),
            random: (n) => randomBytes(n),
          },
          {
            podIp: ip.IPv4Addr,
            hostVeth,
            containerIf: ctx.env.ifname,
            netnsPath: ctx.env.netns,
            mtu: conf.mtu,
            eniTable: ip.RouteTableId,
          },
        );
        return buildAddResult(ctx.config.cniVersion, ctx.env.netns, ctx.env.ifname, {
          address: ip.IPv4Addr,
          deviceNumber: ip.DeviceNumber,
          routeTableId: ip.RouteTableId,
          hostVethName: plan.veth.name,
          hostVethMac: plan.veth.mac,
          vethPrefix: conf.vethPrefix,
        });
      } finally {
        handle.close();
      }
    },
    async del(ctx) {
      const conf = readAwsCniConf(ctx.config);
      const reply = await daemonClient(conf.ipamdSocket, 10_000).delNetwork({
        ...common(ctx),
        Reason: 'PodDeleted',
        PodPlumbing: false,
      });
      const ip = reply.IPAllocationMetadata[0];
      if (ip === undefined) return;
      const a = ctx.env.args;
      const handle = openSync();
      try {
        await teardownPodNetwork(netlinkRoutingPort(handle), {
          podIp: ip.IPv4Addr,
          hostVeth: hostVethName(conf.vethPrefix, a.podNamespace ?? '', a.podName ?? ''),
          eniTable: ip.RouteTableId,
        });
      } finally {
        handle.close();
      }
    },
    async check() {},
  },
  { about: 'aws-cni (benchmark variant: plumbing in the plugin)' },
);
