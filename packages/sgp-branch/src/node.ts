import { parseMac } from '@vpc-cni-kit/netlink';
import { POD_ENI_RESOURCE } from './annotation.js';
import { invalidArgument, SgpError } from './errors.js';

/** A container's resource limits, as the pod spec carries them (`resources.limits`). */
export type ResourceLimits = Readonly<Record<string, string | number>>;

/**
 * Whether the daemon treats a pod as a branch pod: its first container's limits hold a key starting with
 * `vpc.amazonaws.com/pod-eni`, as the reference decides (the controller's webhook puts it there for pods a
 * `SecurityGroupPolicy` selects). `containers` are the pod's containers' limits in spec order.
 */
export function podRequestsBranch(containers: readonly (ResourceLimits | undefined)[]): boolean {
  const first = containers[0];
  return first !== undefined && Object.keys(first).some((k) => k.startsWith(POD_ENI_RESOURCE));
}

/** A host link, as a link dump reports it. */
export interface HostLink {
  /** Interface name. */
  readonly name: string;
  /** Interface index (the reply's `ParentIfIndex`). */
  readonly index: number;
  /** MAC address. */
  readonly mac: string;
}

/**
 * The host link of the trunk ENI, found by its MAC (the reference's `ParentIfIndex` lookup). Throws {@link SgpError}
 * `NO_TRUNK` when the node has no trunk (`trunkMac` undefined), `TRUNK_LINK_NOT_FOUND` when no link has that MAC
 * (yet: the attachment is still being hot-plugged), `INVALID_ARGUMENT` for a malformed MAC.
 */
export function trunkLinkOf<L extends HostLink>(links: readonly L[], trunkMac: string | undefined): L {
  const op = 'trunkLinkOf';
  if (trunkMac === undefined)
    throw new SgpError({ code: 'NO_TRUNK', op, detail: 'the node has no trunk ENI' });
  const want = typeof trunkMac === 'string' ? parseMac(trunkMac) : undefined;
  if (want === undefined) throw invalidArgument(op, `not a MAC: ${JSON.stringify(trunkMac)}`);
  const key = Buffer.from(want).toString('hex');
  const link = links.find((l) => {
    const mac = parseMac(l.mac);
    return mac !== undefined && Buffer.from(mac).toString('hex') === key;
  });
  if (link === undefined) {
    throw new SgpError({
      code: 'TRUNK_LINK_NOT_FOUND',
      op,
      detail: `no link with MAC ${trunkMac.toLowerCase()}`,
    });
  }
  return link;
}
