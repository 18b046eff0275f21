import { netnsAdd, openSync } from '@vpc-cni-kit/netlink';
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
 * mask, and the default route via the subnet gateway.
 */
export function configurePrimaryInterface(
  netnsPath: string,
  ifname: string,
  address: string,
  prefixLength: number,
  gateway: string,
): void {
  const h = openSync({ netns: netnsPath });
  try {
    h.linkSet(ifname, { up: true });
    h.addrAdd({ dev: ifname, address: `${address}/${prefixLength}` });
    h.routeAdd({ dst: 'default', gateway, dev: ifname });
  } finally {
    h.close();
  }
}
