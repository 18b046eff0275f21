import { netnsAdd, openSync, sysctlWrite } from '@vpc-cni-kit/netlink';
import { VPC_IPV6_ADDRESSES } from './ipv6-plan.js';
import { nextEthName } from './plan.js';

/** Creates an instance namespace (`ip netns add`) with `lo` up; returns its file path. */
export function createInstanceNetns(name: string): string {
  const path = netnsAdd(name);
  const h = openSync({ netns: path });
  try {
    h.linkSet('lo', { up: true });
  } finally {
    h.close();
  }
  return path;
}

/** The next free `ethN` name inside a namespace. */
export function nextInstanceIfname(netnsPath: string): string {
  const h = openSync({ netns: netnsPath });
  try {
    return nextEthName(new Set(h.linkList().map((l) => l.name)));
  } finally {
    h.close();
  }
}

/**
 * What EC2's DHCP gives a node on its primary interface: the link up, the primary address with the subnet
 * mask, and the default route via the subnet gateway; with an IPv6 address (`ipv6`), what DHCPv6 and the
 * router's advertisements give: the address as a /128 and the IPv6 default route via `fe80:ec2::1`.
 */
export function configurePrimaryInterface(
  netnsPath: string,
  ifname: string,
  address: string,
  prefixLength: number,
  gateway: string,
  ipv6?: string,
): void {
  // The link-local address is usable at once (the router's neighbour entry for it is static).
  if (ipv6 !== undefined) sysctlWrite(`net/ipv6/conf/${ifname}/accept_dad`, 0, { netns: netnsPath });
  const h = openSync({ netns: netnsPath });
  try {
    h.linkSet(ifname, { up: true });
    h.addrAdd({ dev: ifname, address: `${address}/${prefixLength}` });
    h.routeAdd({ dst: 'default', gateway, dev: ifname });
    if (ipv6 !== undefined) {
      h.addrAdd({ dev: ifname, address: `${ipv6}/128`, nodad: true });
      h.routeAdd({ dst: '::/0', gateway: VPC_IPV6_ADDRESSES.gateway, dev: ifname });
    }
  } finally {
    h.close();
  }
}
