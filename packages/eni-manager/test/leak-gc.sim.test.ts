import { afterEach, describe, expect, it } from 'vitest';
import { TestClock } from './support/test-clock.js';
import { OTHER_INSTANCE, PRIMARY_SUBNET, rfc3339Text, startWorld, type World } from './support/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const OWNER = 'node.k8s.amazonaws.com/instance_id';
const CREATED = 'node.k8s.amazonaws.com/createdAt';
const CLUSTER = 'cluster.k8s.amazonaws.com/name';

async function makeEni(w: World, description: string, tags: Record<string, string>): Promise<string> {
  const out = await w.admin.call('CreateNetworkInterface', {
    SubnetId: PRIMARY_SUBNET,
    Description: description,
    TagSpecifications: [
      {
        ResourceType: 'network-interface',
        Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })),
      },
    ],
  });
  return out.NetworkInterface!.NetworkInterfaceId!;
}

describe('collectLeakedEnis against ec2-simulator', () => {
  it('deletes only ours, only available, only older than 5 minutes; tags the undated', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 22, 12, 0, 0));
    world = await startWorld({ manager: { clock } });
    const w = world;
    const ago = (minutes: number) => rfc3339Text(clock.now() - minutes * 60_000);
    const ours = { [OWNER]: OTHER_INSTANCE, [CLUSTER]: 'test-cluster' };

    const oldOurs = await makeEni(w, `aws-K8S-${OTHER_INSTANCE}`, { ...ours, [CREATED]: ago(10) });
    const youngOurs = await makeEni(w, `aws-K8S-${OTHER_INSTANCE}`, { ...ours, [CREATED]: ago(1) });
    const undated = await makeEni(w, `aws-K8S-${OTHER_INSTANCE}`, ours);
    const badDate = await makeEni(w, `aws-K8S-${OTHER_INSTANCE}`, { ...ours, [CREATED]: 'yesterday' });
    const untagged = await makeEni(w, `aws-K8S-${OTHER_INSTANCE}`, {
      [CLUSTER]: 'test-cluster',
      [CREATED]: ago(60),
    });
    const userMade = await makeEni(w, 'made by a person', { ...ours, [CREATED]: ago(60) });
    const otherCluster = await makeEni(w, `aws-K8S-${OTHER_INSTANCE}`, {
      ...ours,
      [CLUSTER]: 'someone-else',
      [CREATED]: ago(60),
    });
    const attached = await makeEni(w, `aws-K8S-${OTHER_INSTANCE}`, { ...ours, [CREATED]: ago(60) });
    await w.admin.call('AttachNetworkInterface', {
      NetworkInterfaceId: attached,
      InstanceId: OTHER_INSTANCE,
      DeviceIndex: 1,
    });

    const report = await w.manager.collectLeakedEnis();
    expect(report.deleted).toEqual([oldOurs]);
    expect(report.tooYoung).toEqual([youngOurs]);
    expect([...report.taggedNow].sort()).toEqual([undated, badDate].sort());
    expect(report.failed).toEqual([]);

    const remaining = (
      await w.manager.describeEnis([
        oldOurs,
        youngOurs,
        undated,
        badDate,
        untagged,
        userMade,
        otherCluster,
        attached,
      ])
    ).map((e) => e.eniId);
    expect(remaining.sort()).toEqual(
      [youngOurs, undated, badDate, untagged, userMade, otherCluster, attached].sort(),
    );
    const [tagged] = await w.manager.describeEnis([undated]);
    expect(tagged!.tags[CREATED]).toBe(rfc3339Text(clock.now()));

    // Ten minutes on, the young one and the ones dated by the last run are old enough.
    clock.advance(10 * 60_000);
    const later = await w.manager.collectLeakedEnis();
    expect([...later.deleted].sort()).toEqual([youngOurs, undated, badDate].sort());
    const left = (await w.manager.describeEnis([untagged, userMade, otherCluster, attached])).map(
      (e) => e.eniId,
    );
    expect(left.sort()).toEqual([untagged, userMade, otherCluster, attached].sort());
  });

  it('reports ENIs it could not delete, with the error code, and carries on', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 22, 12, 0, 0));
    world = await startWorld({ manager: { clock } });
    const tags = {
      [OWNER]: OTHER_INSTANCE,
      [CLUSTER]: 'test-cluster',
      [CREATED]: rfc3339Text(clock.now() - 3_600_000),
    };
    const a = await makeEni(world, `aws-K8S-${OTHER_INSTANCE}`, tags);
    world.sim.faults.deny('ec2:DeleteNetworkInterface');
    const report = await world.manager.collectLeakedEnis();
    expect(report.failed).toEqual([{ eniId: a, code: 'UnauthorizedOperation' }]);
    expect(report.deleted).toEqual([]);
  });
});
