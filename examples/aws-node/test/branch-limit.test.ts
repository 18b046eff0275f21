/**
 * A branch pod that the controller could not give a branch (the trunk is full) fails with BRANCH_LIMIT_REACHED,
 * not with "annotation missing": the node counts its branch links against the type's published branch limit, and
 * below it the branches EC2 holds for the node (those in the controller's cooldown have no link any more).
 */
import { isSgpError, POD_ENI_RESOURCE } from '@vpc-cni-kit/sgp-branch';
import { describe, expect, it } from 'vitest';
import { BranchPods } from '../src/daemon/branch-pods.js';
import { silentLogger } from '../src/log/logger.js';

const TRUNK = { eniId: 'eni-trunk', mac: '0a:00:00:00:00:07' };

type Held = () => Promise<{ pod?: string }[]>;
const held =
  (n: number, pod?: string): Held =>
  async () => [
    ...Array.from({ length: n - (pod ? 1 : 0) }, (_, i) => ({ pod: `shop/other-${i}` })),
    ...(pod ? [{ pod }] : []),
  ];

function pods(links: string[], branchLimit: number | undefined, heldBranches?: Held) {
  return new BranchPods({
    ...(heldBranches ? { heldBranches } : {}),
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
    log: silentLogger,
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

  it("is BRANCH_LIMIT_REACHED when EC2 holds the trunk's every branch, some in the controller's cooldown", async () => {
    let asked = 0;
    const e = await pods(['vlan.eth.1', 'vlan.eth.2'], 3, async () => {
      asked++;
      return held(3)();
    })
      .resolve('shop', 'client-9')
      .catch((x: unknown) => x);
    expect(isSgpError(e, 'BRANCH_LIMIT_REACHED')).toBe(true);
    expect((e as Error).message).toContain('EC2 holds 3 of the 3 branches');
    expect((e as Error).message).toContain(
      "2 plumbed here, 1 not yet plumbed or released by deleted pods and waiting out the controller's cooldown",
    );
    expect(asked).toBe(1);
  });

  it('is ANNOTATION_MISSING when EC2 holds fewer branches than the trunk takes, or cannot be asked', async () => {
    for (const answer of [held(2), async () => Promise.reject(new Error('throttled'))]) {
      const e = await pods(['vlan.eth.1', 'vlan.eth.2'], 3, answer)
        .resolve('shop', 'client-9')
        .catch((x: unknown) => x);
      expect(isSgpError(e, 'ANNOTATION_MISSING')).toBe(true);
    }
  });

  it("is ANNOTATION_MISSING when one of the branches EC2 holds is the pod's own, made and not yet annotated", async () => {
    const e = await pods(['vlan.eth.1', 'vlan.eth.2'], 3, held(3, 'shop/client-9'))
      .resolve('shop', 'client-9')
      .catch((x: unknown) => x);
    expect(isSgpError(e, 'ANNOTATION_MISSING')).toBe(true);
  });

  it('never asks EC2 for an annotated pod, nor when the links alone decide', async () => {
    let asked = 0;
    const counted = async () => {
      asked++;
      return held(9)();
    };
    const full = await pods(['vlan.eth.1', 'vlan.eth.2', 'vlan.eth.3'], 3, counted)
      .resolve('shop', 'client-9')
      .catch((x: unknown) => x);
    expect(isSgpError(full, 'BRANCH_LIMIT_REACHED')).toBe(true);
    expect(asked).toBe(0);
  });
});
