/**
 * heldBranchesOf: the branch ENIs EC2 holds for this node, read through the real AWS SDK from ec2-simulator —
 * filtered to this instance's branch ENIs, each with the pod its tag names; concurrent asks share one call and
 * an answer serves for `reuseMs`; a failing lookup logs one warning with its code (not one per ask) and one line
 * when it works again.
 */
import { type Ec2Api, eniTagKeys } from '@vpc-cni-kit/eni-manager';
import { BRANCH_ENI_DESCRIPTION, BRANCH_POD_TAG } from '@vpc-cni-kit/sgp-branch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldBranchesOf } from '../src/daemon/branch-pod-sources.js';
import { recordingLogger } from './support/logger.js';
import { type SimNode, startSimNode } from './support/sim-node.js';

let sim: SimNode;
beforeAll(async () => {
  sim = await startSimNode();
  const create = (description: string, tags: Record<string, string>) =>
    sim.admin.call('CreateNetworkInterface', {
      SubnetId: sim.node.primaryEni.subnetId,
      Description: description,
      TagSpecifications: [
        {
          ResourceType: 'network-interface',
          Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })),
        },
      ],
    });
  const instance = { [eniTagKeys.instanceId]: sim.node.instanceId };
  await create(BRANCH_ENI_DESCRIPTION, { ...instance, [BRANCH_POD_TAG]: 'shop/client-1' });
  await create(BRANCH_ENI_DESCRIPTION, instance); // made by a controller that does not tag the pod
  await create(BRANCH_ENI_DESCRIPTION, { [eniTagKeys.instanceId]: 'i-0b0000000000000ff' }); // another node's
  await create('aws-K8S-i-0b000000000000001', instance); // not a branch
});
afterAll(async () => {
  await sim?.close();
});

/** `sim.admin`, counting its calls. */
function counting(): { api: Ec2Api; calls: () => number } {
  let calls = 0;
  const api: Ec2Api = {
    call: (action, input) => {
      calls++;
      return sim.admin.call(action, input);
    },
    destroy: () => undefined,
  };
  return { api, calls: () => calls };
}

describe('heldBranchesOf', () => {
  it("lists this instance's branch ENIs only, with the pod each is tagged for", async () => {
    const held = await heldBranchesOf(sim.admin, sim.node.instanceId, {
      now: () => 0,
      log: recordingLogger(),
    })();
    expect(held).toHaveLength(2);
    expect(held).toContainEqual({ pod: 'shop/client-1' });
    expect(held).toContainEqual({});
  });

  it('makes one call for concurrent asks and for asks within reuseMs, and asks again after', async () => {
    let t = 0;
    const c = counting();
    const held = heldBranchesOf(c.api, sim.node.instanceId, {
      now: () => t,
      log: recordingLogger(),
      reuseMs: 1000,
    });
    const answers = await Promise.all([held(), held(), held()]);
    expect(c.calls()).toBe(1);
    expect(new Set(answers.map((a) => a.length))).toEqual(new Set([2]));
    t = 999;
    await held();
    expect(c.calls()).toBe(1);
    t = 1000;
    await held();
    expect(c.calls()).toBe(2);
  });

  it('a lookup EC2 refuses: rejects with the code, one warning for many asks, one line when it works again', async () => {
    let t = 0;
    const log = recordingLogger();
    const held = heldBranchesOf(sim.admin, sim.node.instanceId, { now: () => t, log, reuseMs: 1000 });
    sim.sim.faults.deny('DescribeNetworkInterfaces');
    try {
      for (let i = 0; i < 3; i++) {
        t += 5000;
        await expect(held()).rejects.toMatchObject({ code: 'UnauthorizedOperation' });
      }
    } finally {
      sim.sim.faults.clear();
    }
    const warnings = log.lines.filter((l) => l.startsWith('warn'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("cannot read this node's branch ENIs from EC2");
    expect(warnings[0]).toContain('ANNOTATION_MISSING (122), not BRANCH_LIMIT_REACHED (126)');
    expect(warnings[0]).toContain('"code":"UnauthorizedOperation"');
    expect(warnings[0]).toContain(`"instanceId":"${sim.node.instanceId}"`);
    t += 5000;
    expect(await held()).toHaveLength(2);
    t += 5000;
    await held();
    expect(log.lines.filter((l) => l.includes('read from EC2 again'))).toHaveLength(1);
    // Failing again is a new episode: one more warning, now with the throttling code.
    sim.sim.faults.throttleNext(1, 'DescribeNetworkInterfaces');
    t += 5000;
    await expect(held()).rejects.toMatchObject({ code: 'RequestLimitExceeded' });
    expect(log.lines.filter((l) => l.startsWith('warn'))).toHaveLength(2);
    expect(log.lines.at(-1)).toContain('"code":"RequestLimitExceeded"');
  });
});
