/**
 * A branch pod that the controller could not give a branch (the trunk is full) fails with BRANCH_LIMIT_REACHED,
 * not with "annotation missing": the node counts its branch links against the type's published branch limit.
 */
import { isSgpError, POD_ENI_RESOURCE } from '@vpc-cni-kit/sgp-branch';
import { describe, expect, it } from 'vitest';
import { BranchPods } from '../src/daemon/branch-pods.js';

const TRUNK = { eniId: 'eni-trunk', mac: '0a:00:00:00:00:07' };

function pods(links: string[], branchLimit: number | undefined) {
  return new BranchPods({
    mode: 'strict',
    linkKind: 'macvlan',
    readPod: async () => ({ annotations: {}, containerLimits: [{ [POD_ENI_RESOURCE]: '1' }] }),
    trunk: async () => TRUNK,
    hostLinks: async () => [
      { name: 'eth1', index: 3, mac: TRUNK.mac },
      ...links.map((name, i) => ({ name, index: 10 + i, mac: `0a:00:00:00:01:0${i}` })),
    ],
    plumber: {
      setup: async () => ({ hostMac: '0a:00:00:00:00:99' }),
      teardown: async () => undefined,
    },
    branchLimit,
    now: () => 0,
  });
}

describe('BranchPods.resolve without an annotation', () => {
  it('is BRANCH_LIMIT_REACHED once the node carries as many branch links as the trunk takes', async () => {
    const e = await pods(['vlan.eth.1', 'vlan.eth.2', 'vlan.eth.3', 'vlan1a2b3c4d5e6'], 3)
      .resolve('shop', 'client-9')
      .catch((x: unknown) => x);
    expect(isSgpError(e, 'BRANCH_LIMIT_REACHED')).toBe(true);
    expect((e as Error).message).toContain('carries 3 of 3 branches');
  });

  it('is ANNOTATION_MISSING below the limit, or when the limit is unknown', async () => {
    for (const [links, limit] of [
      [['vlan.eth.1', 'vlan.eth.2'], 3],
      [['vlan.eth.1', 'vlan.eth.2', 'vlan.eth.3'], undefined],
    ] as const) {
      const e = await pods([...links], limit)
        .resolve('shop', 'client-9')
        .catch((x: unknown) => x);
      expect(isSgpError(e, 'ANNOTATION_MISSING')).toBe(true);
    }
  });
});
