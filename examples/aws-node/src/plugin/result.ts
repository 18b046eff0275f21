import { CniError, CniErrorCode, type Result, type ResultInterface } from '@vpc-cni-kit/cni-spec';
import { familyBits, ipFamily } from '@vpc-cni-kit/ip-address';

/** What the daemon reported for one plumbed pod address. */
export interface PlumbedPod {
  address: string;
  deviceNumber: number;
  routeTableId: number;
  hostVethName: string;
  hostVethMac: string;
  vethPrefix: string;
}

/**
 * Builds the ADD result in the reference's exact shape, so cached results stay readable across the
 * reference plugin and this one (a node upgraded from the reference can DEL pods it created, and back):
 * `[hostVeth, containerIf (mac = route table id), dummy<hash> (mac "0", sandbox = device number)]`, one /32 (a /128
 * in IPv6 mode) address on the container interface, no gateway, no routes.
 */
export function buildAddResult(
  cniVersion: Result['cniVersion'],
  netns: string,
  ifname: string,
  pod: PlumbedPod,
): Result {
  const hash = pod.hostVethName.slice(pod.vethPrefix.length);
  const interfaces: ResultInterface[] = [
    { name: pod.hostVethName, mac: pod.hostVethMac },
    { name: ifname, sandbox: netns, mac: String(pod.routeTableId) },
    { name: `dummy${hash}`, mac: '0', sandbox: String(pod.deviceNumber) },
  ];
  // The reference's getIPAddressFromIpAllocationMetadata: a /32, or a /128 in IPv6 mode.
  const family = ipFamily(pod.address);
  if (family === undefined)
    throw new CniError(
      CniErrorCode.Internal,
      'aws-node reported a pod address that is not an address',
      pod.address,
    );
  return {
    cniVersion,
    interfaces,
    ips: [{ address: `${pod.address}/${familyBits(family)}`, interface: 1 }],
  };
}

/** The pod address, device number and route table a prevResult records (for teardown without the daemon). */
export interface PrevResultPod {
  address: string;
  routeTableId: number;
  hostVethName: string | undefined;
}

/**
 * Reads back what {@link buildAddResult} wrote (or what the reference plugin wrote): the dummy marker's
 * device number, the container interface's address, and its route table id (from its MAC, else derived from
 * the device number as the reference does). Returns `undefined` when the prevResult is not ours (a branch-ENI
 * pod, or none at all).
 */
export function readPrevResult(prev: Result | undefined, ifname: string): PrevResultPod | undefined {
  if (prev?.interfaces === undefined || prev.ips === undefined) return undefined;
  const dummy = prev.interfaces.find((i) => i.name.startsWith('dummy'));
  if (dummy === undefined || dummy.mac !== '0') return undefined;
  const deviceNumber = Number(dummy.sandbox ?? '0');
  if (!Number.isInteger(deviceNumber) || deviceNumber < 0) return undefined;
  const podIndex = prev.interfaces.findIndex(
    (i) => i.name === ifname && i.sandbox !== undefined && i !== dummy,
  );
  if (podIndex < 0) return undefined;
  const ip = prev.ips.find(
    (i) => i.interface === podIndex && (i.address.endsWith('/32') || i.address.endsWith('/128')),
  );
  if (ip === undefined) return undefined;
  const macTable = Number(prev.interfaces[podIndex]?.mac ?? '');
  const routeTableId =
    Number.isInteger(macTable) && macTable > 0 ? macTable : deviceNumber === 0 ? 254 : deviceNumber + 1;
  const host = prev.interfaces.find((i) => i.sandbox === undefined && i !== dummy);
  return { address: ip.address.split('/')[0]!, routeTableId, hostVethName: host?.name };
}

/** What the daemon reported for a branch-ENI pod (security groups for pods). */
export interface PlumbedBranchPod {
  address: string;
  vlanId: number;
  /** `PodENISubnetGW`. */
  subnetGateway: string;
  hostVethName: string;
  hostVethMac: string;
  /** The prefix the host veth name was built with (`vlan` in strict mode). */
  vethPrefix: string;
}

/**
 * The ADD result of a branch-ENI pod in the reference's shape: `[hostVeth, containerIf (mac "0"), dummy<hash>
 * (mac = VLAN id)]`, the /32 address on the container interface with the branch subnet's gateway. The dummy's
 * VLAN id is what DEL reads to tear the branch down without the daemon.
 */
export function buildBranchAddResult(
  cniVersion: Result['cniVersion'],
  netns: string,
  ifname: string,
  pod: PlumbedBranchPod,
): Result {
  const hash = pod.hostVethName.slice(pod.vethPrefix.length);
  const interfaces: ResultInterface[] = [
    { name: pod.hostVethName, mac: pod.hostVethMac },
    { name: ifname, sandbox: netns, mac: '0' },
    { name: `dummy${hash}`, mac: String(pod.vlanId) },
  ];
  return {
    cniVersion,
    interfaces,
    ips: [{ address: `${pod.address}/32`, interface: 1, gateway: pod.subnetGateway }],
  };
}

/** A branch-ENI pod as its prevResult records it. */
export interface PrevResultBranchPod {
  vlanId: number;
  address: string;
  hostVethName: string;
}

/**
 * Reads a branch-ENI pod back from a prevResult (the dummy interface's MAC is a VLAN id other than 0), as the
 * reference's `tryDelWithPrevResult` does. `undefined` when the prevResult is not a branch pod's; throws when its
 * marker is malformed (a VLAN id that is not a number, no single /32 address on `ifname`).
 */
export function readBranchPrevResult(
  prev: Result | undefined,
  ifname: string,
): PrevResultBranchPod | undefined {
  const dummy = prev?.interfaces?.find((i) => i.name.startsWith('dummy'));
  if (prev === undefined || dummy === undefined || dummy.mac === '0') return undefined;
  const vlanId = Number(dummy.mac);
  if (!/^\d+$/.test(dummy.mac ?? '') || vlanId < 1 || vlanId > 4094)
    throw new Error(`malformed vlanID in prevResult: ${String(dummy.mac)}`);
  const podIndex = prev.interfaces!.findIndex((i) => i.name === ifname && i.sandbox !== undefined);
  if (podIndex < 0) throw new Error(`cannot find contVethName ${ifname} in prevResult`);
  const ips = (prev.ips ?? []).filter((i) => i.interface === podIndex);
  if (ips.length !== 1 || !ips[0]!.address.endsWith('/32'))
    throw new Error(`found ${ips.length} containerIPs for ${ifname} in prevResult`);
  const host = prev.interfaces!.find((i) => i.sandbox === undefined && i !== dummy);
  if (host === undefined) throw new Error('prevResult names no host veth');
  return { vlanId, address: ips[0]!.address.slice(0, -3), hostVethName: host.name };
}
