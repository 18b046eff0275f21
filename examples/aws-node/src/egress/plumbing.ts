/**
 * The kernel side of egress-cni, on netlink handles: the egress veth (`v4if0`/`v6if0` in the pod, a random
 * `veth…` on the host), its address and routes in the pod, the host's route back to the pod, and the checks
 * CHECK runs. The SNAT chain is iptables-snat's (`addEgressSnat`).
 */
import { CniError, CniErrorCode } from '@vpc-cni-kit/cni-spec';
import { cidrNetwork, familyBits, formatCidr, parseCidr } from '@vpc-cni-kit/ip-address';
import { isNetlinkError, type NetlinkHandleSync, sysctlRead, sysctlWrite } from '@vpc-cni-kit/netlink';

/** The two ends of the plumbing: handles in the host's (the plugin's own) and the pod's namespace. */
export interface EgressHandles {
  /** The namespace the plugin runs in: the node. */
  readonly host: NetlinkHandleSync;
  /** The pod's namespace (`CNI_NETNS`). */
  readonly pod: NetlinkHandleSync;
  /** `CNI_NETNS`, for creating the veth's peer there and for the pod's sysctls. */
  readonly podNetns: string;
}

/** What IPAM gave the pod for egress. */
export interface EgressAddress {
  /** `169.254.172.x/22` or `fd00::ac:x/118`. */
  readonly cidr: string;
  /** The address without its prefix length. */
  readonly ip: string;
  /** IPAM's gateway (the range's first address). Required for IPv4 egress. */
  readonly gateway: string | undefined;
  /** IPAM's routes (`0.0.0.0/0` in the conflist), through the gateway unless they name another. */
  readonly routes: readonly { dst: string; gw?: string | undefined }[];
}

/** The egress veth as created: names and MAC addresses, for the result. */
export interface EgressVeth {
  readonly hostIf: string;
  readonly hostMac: string;
  readonly podIf: string;
  readonly podMac: string;
}

/** How long an EEXIST on the host route is retried, and the wait between tries (the reference's 5 × 100 ms). */
const ROUTE_RETRIES = 5;
const ROUTE_RETRY_MS = 100;
/** How long the host veth's link-local address may take to appear (the reference's DAD timeout), and the poll. */
const LINK_LOCAL_TIMEOUT_MS = 10_000;
const LINK_LOCAL_POLL_MS = 50;
/** An IPv6 address still in duplicate address detection (not usable yet). */
const IFA_F_TENTATIVE = 0x40;

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Adds the host's route to the pod, retrying EEXIST as the reference does: a pod being replaced may still hold
 * a stale route through its dying veth for a moment.
 */
function addHostRoute(host: NetlinkHandleSync, route: Parameters<NetlinkHandleSync['routeAdd']>[0]): void {
  for (let attempt = 1; ; attempt++) {
    try {
      host.routeAdd(route);
      return;
    } catch (e) {
      if (!isNetlinkError(e, 'EEXIST') || attempt >= ROUTE_RETRIES) throw e;
      sleep(ROUTE_RETRY_MS);
    }
  }
}

function createVeth(h: EgressHandles, hostIf: string, podIf: string, mtu: number): EgressVeth {
  h.host.linkAdd({ kind: 'veth', name: hostIf, mtu, peer: { name: podIf, mtu, netns: h.podNetns } });
  return {
    hostIf,
    podIf,
    hostMac: h.host.linkGet(hostIf).address ?? '',
    podMac: h.pod.linkGet(podIf).address ?? '',
  };
}

/** Turns IPv4 forwarding on in the host namespace when it is off (upstream `EnableIPForward`). */
export function enableIpv4Forwarding(): void {
  if (sysctlRead('net.ipv4.ip_forward') !== '1') sysctlWrite('net.ipv4.ip_forward', '1');
}

/**
 * IPv4 egress of an IPv6 pod, as the reference plumbs it: `v4if0` with IPAM's address (/22) whose subnet is
 * reached through the gateway (`gw/32 scope link`, `subnet via gw`, both with the pod address as source) rather
 * than on-link, IPAM's routes (the default route) through the gateway; on the host, the gateway as a /32
 * scope-link address on the veth and the pod's /32 routed to it.
 */
export function plumbV4(
  h: EgressHandles,
  hostIf: string,
  podIf: string,
  mtu: number,
  a: EgressAddress,
): EgressVeth {
  const gateway = a.gateway;
  if (gateway === undefined)
    throw new CniError(CniErrorCode.Internal, 'IPAM gave no gateway for IPv4 egress');
  const subnet = parseCidr(a.cidr);
  if (subnet === undefined) throw new CniError(CniErrorCode.Internal, `IPAM gave a bad address ${a.cidr}`);
  const veth = createVeth(h, hostIf, podIf, mtu);
  h.pod.linkSet(podIf, { up: true });
  // The address without its on-link subnet route: the subnet goes through the gateway instead.
  h.pod.addrAdd({ dev: podIf, address: a.cidr, noPrefixRoute: true });
  h.pod.routeAdd({ dst: `${gateway}/32`, dev: podIf, scope: 'link', src: a.ip });
  h.pod.routeAdd({ dst: formatCidr(cidrNetwork(subnet)), gateway, dev: podIf, src: a.ip });
  for (const r of a.routes) h.pod.routeAdd({ dst: r.dst, gateway: r.gw ?? gateway, dev: podIf });

  h.host.linkSet(hostIf, { up: true });
  h.host.addrAdd({ dev: hostIf, address: `${gateway}/32`, scope: 'link' });
  addHostRoute(h.host, { dst: `${a.ip}/32`, dev: hostIf, scope: 'link' });
  return veth;
}

/** The first link-local IPv6 address of a link, waiting for the kernel to make it. */
function linkLocalOf(handle: NetlinkHandleSync, dev: string, index: number): string {
  const deadline = Date.now() + LINK_LOCAL_TIMEOUT_MS;
  for (;;) {
    const found = handle
      .addrList({ dev: index, family: 6 })
      .find((x) => x.address.toLowerCase().startsWith('fe80:') && (x.flags & IFA_F_TENTATIVE) === 0);
    if (found !== undefined) return found.address;
    if (Date.now() >= deadline)
      throw new CniError(CniErrorCode.Internal, `link-local IPv6 address not found on host interface ${dev}`);
    sleep(LINK_LOCAL_POLL_MS);
  }
}

/**
 * IPv6 egress of an IPv4 pod, as the reference plumbs it: IPv6 off on the pod's own interface (`ifname`),
 * `v6if0` with IPAM's unique-local address and the default route through the host veth's link-local address;
 * on the host, the pod's /128 routed to the veth (no address on the host end). Duplicate address detection is
 * off on both ends of this two-ended link (the reference waits it out, up to 10 s), so the addresses are usable
 * at once.
 */
export function plumbV6(
  h: EgressHandles,
  hostIf: string,
  podIf: string,
  podMainIf: string,
  mtu: number,
  a: EgressAddress,
): EgressVeth {
  const veth = createVeth(h, hostIf, podIf, mtu);
  sysctlWrite(`net/ipv6/conf/${hostIf}/accept_dad`, '0');
  sysctlWrite(`net/ipv6/conf/${podIf}/accept_dad`, '0', { netns: h.podNetns });
  h.host.linkSet(hostIf, { up: true });
  h.pod.linkSet(podIf, { up: true });
  h.pod.addrAdd({ dev: podIf, address: a.cidr, nodad: true });
  const hostLink = h.host.linkGet(hostIf);
  const gateway = linkLocalOf(h.host, hostIf, hostLink.index);
  h.pod.routeReplace({ dst: '::/0', gateway, dev: podIf });
  addHostRoute(h.host, { dst: `${a.ip}/128`, dev: hostLink.index });
  // Last, so that a failure above (rolled back by removing v6if0) leaves the pod's own interface as it was.
  sysctlWrite(`net/ipv6/conf/${podMainIf}/disable_ipv6`, '1', { netns: h.podNetns });
  return veth;
}

/**
 * Deletes the pod's egress interface (its host end, the host's route and address go with it). A namespace
 * or interface already gone is success.
 */
export function removeEgressLink(pod: NetlinkHandleSync, podIf: string): void {
  try {
    pod.linkDel(podIf);
  } catch (e) {
    if (!isNetlinkError(e, 'ENODEV')) throw e;
  }
}

/** The pod's egress address on `podIf` in `family`, or `undefined` when the interface or address is missing. */
export function egressAddressOf(pod: NetlinkHandleSync, podIf: string, family: 4 | 6): string | undefined {
  let index: number;
  try {
    index = pod.linkGet(podIf).index;
  } catch (e) {
    if (isNetlinkError(e, 'ENODEV')) return undefined;
    throw e;
  }
  return pod.addrList({ dev: index, family }).find((x) => !x.address.toLowerCase().startsWith('fe80:'))
    ?.address;
}

/**
 * CHECK: the egress interface, its address and routes in the pod, the host end and its route to the pod are
 * all there. Returns the pod's egress address (for the SNAT check); throws an `Internal` (999) error naming
 * the first thing missing.
 */
export function verifyEgress(h: EgressHandles, podIf: string, family: 4 | 6): string {
  const missing = (what: string) => new CniError(CniErrorCode.Internal, `check: ${what}`);
  let link: ReturnType<NetlinkHandleSync['linkGet']>;
  try {
    link = h.pod.linkGet(podIf);
  } catch (e) {
    if (isNetlinkError(e, 'ENODEV')) throw missing(`no ${podIf} in the pod`);
    throw e;
  }
  if (!link.up) throw missing(`${podIf} is down`);
  const ip = egressAddressOf(h.pod, podIf, family);
  if (ip === undefined) throw missing(`${podIf} has no IPv${family} address`);
  const defaultDst = family === 4 ? '0.0.0.0/0' : '::/0';
  const viaEgress = h.pod.routeList({ family, dev: link.index }).find((r) => r.dst === defaultDst);
  if (viaEgress?.gateway === undefined) throw missing(`no default route through ${podIf}`);
  const peer = link.parentIndex;
  let hostIf: ReturnType<NetlinkHandleSync['linkGet']> | undefined;
  try {
    hostIf = peer === undefined ? undefined : h.host.linkGet(peer);
  } catch (e) {
    if (!isNetlinkError(e, 'ENODEV')) throw e;
  }
  if (hostIf === undefined || !hostIf.up) throw missing(`the host end of ${podIf} is missing or down`);
  const toPod = `${ip}/${familyBits(family)}`;
  if (!h.host.routeList({ family, dev: hostIf.index }).some((r) => r.dst === toPod))
    throw missing(`no host route to ${ip} through ${hostIf.name}`);
  return ip;
}
