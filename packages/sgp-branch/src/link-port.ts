import {
  isNetlinkError,
  type NetlinkHandle,
  type NetlinkHandleSync,
  type NetlinkOps,
} from '@vpc-cni-kit/netlink';
import { SgpError } from './errors.js';
import type { BranchLinkSpec } from './plan.js';

/**
 * The one effect routing-table's port lacks for branch pods: creating the branch link on the trunk. Removing it
 * goes through routing-table's `setLink(name, { remove: true })`. Implementations report a missing trunk link as
 * {@link SgpError} `TRUNK_LINK_NOT_FOUND` and an existing link of that name as `exists: true`.
 */
export interface BranchLinkPort {
  /** Creates `spec` on its parent (down); resolves `{ exists: true }` when a link of that name is already there. */
  addBranchLink(spec: BranchLinkSpec): Promise<{ readonly exists: boolean }>;
}

/**
 * A {@link BranchLinkPort} over an `@vpc-cni-kit/netlink` handle bound to the host namespace:
 * `ip link add link <trunk> name vlan.eth.<id> address <mac> type vlan id <id>` (or `type macvlan mode <m>`).
 */
export function netlinkBranchLinkPort(handle: NetlinkHandle | NetlinkHandleSync): BranchLinkPort {
  const h = handle as unknown as NetlinkOps<'async'>;
  return {
    async addBranchLink(spec) {
      const common = { name: spec.name, parent: spec.parent, address: spec.mac };
      try {
        if (spec.kind === 'vlan') await h.linkAdd({ kind: 'vlan', ...common, id: spec.vlanId });
        else await h.linkAdd({ kind: 'macvlan', ...common, mode: spec.macvlanMode ?? 'vepa' });
        return { exists: false };
      } catch (error) {
        if (isNetlinkError(error, 'EEXIST')) return { exists: true };
        if (isNetlinkError(error, 'ENODEV', 'ENOENT')) {
          throw new SgpError({
            code: 'TRUNK_LINK_NOT_FOUND',
            op: 'addBranchLink',
            detail: `no link ${spec.parent}`,
            cause: error,
          });
        }
        throw new SgpError({
          code: 'KERNEL',
          op: 'addBranchLink',
          detail: (error as Error).message,
          cause: error,
        });
      }
    },
  };
}
