/** The IPAM backend as tests build it, and the requests the plugin sends for pod `p<n>`. */
import type { Datastore } from '@vpc-cni-kit/datastore';
import { type IpamBackendDeps, ipamBackend, type PodPlumber } from '../../src/daemon/ipam-backend.js';
import { silentLogger } from '../../src/daemon/logger.js';
import type { CniBackend } from '../../src/rpc/grpc-server.js';
import type { AddNetworkRequest, DelNetworkRequest } from '../../src/rpc/messages.js';

/** An `ipamBackend` over `datastore` and `plumber` with quiet defaults (no netns check); `more` overrides. */
export function testBackend(
  datastore: Datastore,
  plumber: PodPlumber,
  more: Partial<IpamBackendDeps> = {},
): CniBackend {
  return ipamBackend({
    datastore,
    plumber,
    log: silentLogger,
    observer: { addNetwork: () => {}, delNetwork: () => {}, noAvailableAddress: () => {} },
    version: '',
    vethPrefix: 'eni',
    podMtu: 9001,
    vpcCidrs: () => ['10.0.0.0/16'],
    externalSnat: false,
    shuttingDown: () => false,
    poolCondition: () => ({ subnetExhausted: false, eniLimitReached: false }),
    wakePool: () => {},
    now: () => performance.now(),
    checkNetns: () => undefined,
    ...more,
  });
}

/** The pod key of pod `p<n>`. */
export const podKey = (n: number) => ({ networkName: 'aws-cni', containerID: `c-${n}`, ifName: 'eth0' });

/** The AddNetwork request of pod `p<n>` (namespace `default`, daemon-side plumbing). */
export function addRequest(n: number): AddNetworkRequest {
  return {
    K8S_POD_NAME: `p${n}`,
    K8S_POD_NAMESPACE: 'default',
    K8S_POD_INFRA_CONTAINER_ID: `c-${n}`,
    Netns: `/var/run/netns/x${n}`,
    IfName: 'eth0',
    NetworkName: 'aws-cni',
    ContainerID: `c-${n}`,
    ClientVersion: '',
    RequiresMultiNICAttachment: false,
    PodPlumbing: true,
    Mtu: 0,
    VethPrefix: '',
  };
}

/** The DelNetwork request of pod `p<n>`. */
export function delRequest(n: number): DelNetworkRequest {
  return {
    K8S_POD_NAME: `p${n}`,
    K8S_POD_NAMESPACE: 'default',
    K8S_POD_INFRA_CONTAINER_ID: `c-${n}`,
    Reason: 'PodDeleted',
    IfName: 'eth0',
    NetworkName: 'aws-cni',
    ContainerID: `c-${n}`,
    ClientVersion: '',
    K8S_POD_UID: '',
    PodPlumbing: true,
  };
}
