/**
 * ENI classification (issue #20): whatever ENIs EC2 shows attached to the node (tagged no_manage, untagged,
 * tagged for another instance, trunk, in a subnet tagged `kubernetes.io/role/cni=0`, attached before or after
 * start), the daemon's start, pool loop and reconcile never assign from, release from, free, tag or adopt an
 * unmanaged one. EC2 is the in-process ec2-simulator through the real AWS SDK; IMDS is its IMDS over HTTP.
 */
import { Datastore } from '@vpc-cni-kit/datastore';
import { InMemoryGroupCommitCheckpointer } from '@vpc-cni-kit/datastore/testing';
import { ManualClock, startEc2Simulator } from '@vpc-cni-kit/ec2-simulator';
import {
  allocationNodeOf,
  createEc2Api,
  createEniManager,
  createImdsNodeMetadata,
  type EniManager,
  ImdsClient,
  subnetExcludedForPods as subnetExcluded,
} from '@vpc-cni-kit/eni-manager';
import { routeTableId } from '@vpc-cni-kit/routing-table';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyNodeEni, guardEniManager, managedEniTags, NodeEnis } from '../src/daemon/eni-classes.js';
import { silentLogger } from '../src/daemon/logger.js';
import { reconcileWithImds } from '../src/daemon/reconcile.js';
import { restoreNode } from '../src/daemon/restore.js';
import { testPool } from './support/pool.js';

const INSTANCE = 'i-0d000000000000001';
const NODE_SUBNET = 'subnet-0d000000000000001';
const EXCLUDED_SUBNET = 'subnet-0d000000000000002';
const scenario = {
  region: 'us-west-2',
  vpcs: [{ id: 'vpc-0d000000000000001', cidrBlocks: ['10.0.0.0/16'] }],
  subnets: [
    { id: NODE_SUBNET, cidrBlock: '10.0.0.0/20', availabilityZone: 'us-west-2a' },
    {
      id: EXCLUDED_SUBNET,
      cidrBlock: '10.0.16.0/20',
      availabilityZone: 'us-west-2a',
      tags: { 'kubernetes.io/role/cni': '0' },
    },
  ],
  instances: [{ id: INSTANCE, instanceType: 'm5.4xlarge', subnetId: NODE_SUBNET }],
};
const credentials = { accessKeyId: 'AKIDSIMULATOR', secretAccessKey: 'simulator' };

type Kind = 'no-manage' | 'untagged' | 'other-instance' | 'trunk' | 'excluded-subnet' | 'ours';
interface Extra {
  kind: Kind;
  addresses: number;
  afterStart: boolean;
}
const expectedUnmanaged = (k: Kind, manageUntagged: boolean) =>
  k === 'no-manage' ||
  k === 'trunk' ||
  k === 'excluded-subnet' ||
  ((k === 'untagged' || k === 'other-instance') && !manageUntagged);

const MUTATIONS = ['assignIpv4', 'unassignIpv4', 'freeEni', 'tagEni'] as const;

/** The eni-manager, with every mutating call it is asked to make written down (eni id first). */
function recording(eni: EniManager, log: string[]): EniManager {
  const out = { ...eni } as Record<string, unknown>;
  for (const m of MUTATIONS) {
    const f = eni[m] as (id: string, ...rest: unknown[]) => Promise<unknown>;
    out[m] = (id: string, ...rest: unknown[]) => {
      log.push(`${m} ${id}`);
      return f(id, ...rest);
    };
  }
  return out as unknown as EniManager;
}

async function world(extras: readonly Extra[], manageUntagged: boolean, warmIpTarget: number) {
  const clock = new ManualClock();
  const sim = await startEc2Simulator({
    scenario,
    clock,
    rateLimits: false,
    timing: { eventualConsistencyMs: 0, attachDelayMs: 0, detachDelayMs: 0, imdsDelayMs: 0 },
  });
  const ec2 = createEc2Api({ region: sim.region, endpoint: sim.endpoint, credentials, maxAttempts: 1 });
  const admin = createEc2Api({ region: sim.region, endpoint: sim.endpoint, credentials, maxAttempts: 1 });
  const close = async () => {
    ec2.destroy();
    admin.destroy();
    await sim.close();
  };
  try {
    const metadata = createImdsNodeMetadata(new ImdsClient({ endpoint: sim.imdsEndpoint(INSTANCE) }));
    const node = await metadata.discoverNode();
    const created: { id: string; extra: Extra }[] = [];
    for (const extra of extras) {
      const tags: Record<string, string> =
        extra.kind === 'no-manage'
          ? { 'node.k8s.amazonaws.com/no_manage': 'true', 'node.k8s.amazonaws.com/instance_id': INSTANCE }
          : extra.kind === 'other-instance'
            ? { 'node.k8s.amazonaws.com/instance_id': 'i-0d00000000000ffff' }
            : extra.kind === 'ours' || extra.kind === 'excluded-subnet'
              ? { 'node.k8s.amazonaws.com/instance_id': INSTANCE }
              : {};
      const out = await admin.call('CreateNetworkInterface', {
        SubnetId: extra.kind === 'excluded-subnet' ? EXCLUDED_SUBNET : NODE_SUBNET,
        ...(extra.addresses > 0 ? { SecondaryPrivateIpAddressCount: extra.addresses } : {}),
        ...(extra.kind === 'trunk' ? { InterfaceType: 'trunk' } : {}),
        TagSpecifications: [
          {
            ResourceType: 'network-interface',
            Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })),
          },
        ],
      });
      created.push({ id: out.NetworkInterface!.NetworkInterfaceId!, extra });
    }
    const attach = async (id: string) => {
      const used = new Set(sim.state.attachedEnis(INSTANCE).map((e) => e.attachment?.deviceIndex));
      let device = 1;
      while (used.has(device)) device++;
      await admin.call('AttachNetworkInterface', {
        InstanceId: INSTANCE,
        NetworkInterfaceId: id,
        DeviceIndex: device,
      });
    };
    return { sim, clock, ec2, admin, metadata, node, created, attach, close, manageUntagged, warmIpTarget };
  } catch (e) {
    await close();
    throw e;
  }
}

const snapshot = (sim: Awaited<ReturnType<typeof startEc2Simulator>>, id: string) =>
  JSON.stringify(sim.state.eni(id), (_k, v: unknown) => (v instanceof Map ? [...v.entries()] : v));

describe('ENI classification', () => {
  it('the reference rule, one ENI at a time', () => {
    const policy = { instanceId: 'i-1', primaryEniId: 'eni-p', manageUntaggedEnis: false, clusterName: 'c1' };
    const imds = {
      mac: '0a:00:00:00:00:01',
      eniId: 'eni-1',
      deviceNumber: 1,
      networkCard: 0,
      subnetId: 'subnet-1',
      subnetIpv4Cidr: '10.0.0.0/24',
      vpcId: 'vpc-1',
      vpcIpv4Cidrs: ['10.0.0.0/16'],
      securityGroupIds: [],
      ipv4Addresses: ['10.0.0.5'],
      ipv4Prefixes: [],
      ipv6Addresses: [],
      ipv6Prefixes: [],
      subnetIpv6Cidrs: [],
      vpcIpv6Cidrs: [],
    };
    const ec2 = (tags: Record<string, string>, interfaceType = 'interface') =>
      ({ eniId: 'eni-1', tags, interfaceType }) as never;
    const mine = { 'node.k8s.amazonaws.com/instance_id': 'i-1' };
    expect(classifyNodeEni(imds, ec2(mine), {}, policy)).toEqual({ kind: 'managed' });
    expect(classifyNodeEni(imds, ec2({}), {}, policy)).toEqual({ kind: 'unmanaged', reason: 'untagged' });
    expect(classifyNodeEni(imds, ec2({}), {}, { ...policy, manageUntaggedEnis: true })).toEqual({
      kind: 'managed',
    });
    expect(
      classifyNodeEni(imds, ec2({ ...mine, 'node.k8s.amazonaws.com/no_manage': 'true' }), {}, policy),
    ).toEqual({ kind: 'unmanaged', reason: 'no-manage-tag' });
    // Any other no_manage value: managed, as the reference.
    expect(classifyNodeEni(imds, ec2({ 'node.k8s.amazonaws.com/no_manage': 'false' }), {}, policy)).toEqual({
      kind: 'managed',
    });
    expect(classifyNodeEni(imds, ec2(mine, 'trunk'), {}, policy)).toEqual({
      kind: 'unmanaged',
      reason: 'trunk',
    });
    expect(classifyNodeEni(imds, ec2(mine, 'efa-only'), {}, policy)).toEqual({
      kind: 'unmanaged',
      reason: 'efa-only',
    });
    // IMDS alone: an ENI with no addresses is EFA-only; everything else is managed (IMDS-only mode).
    expect(classifyNodeEni({ ...imds, ipv4Addresses: [] }, 'not-read', undefined, policy)).toEqual({
      kind: 'unmanaged',
      reason: 'efa-only',
    });
    expect(classifyNodeEni(imds, 'not-read', undefined, policy)).toEqual({ kind: 'managed' });
    // EC2 does not list it yet: undecided.
    expect(classifyNodeEni(imds, undefined, {}, policy)).toEqual({ kind: 'unknown' });
    // The primary ENI is always managed.
    expect(classifyNodeEni({ ...imds, eniId: 'eni-p' }, ec2({}), {}, policy)).toEqual({ kind: 'managed' });
    expect(subnetExcluded({ 'kubernetes.io/role/cni': '0' }, '')).toBe(true);
    expect(subnetExcluded({ 'kubernetes.io/role/cni': '1' }, '')).toBe(false);
    expect(subnetExcluded({ 'cni.networking.k8s.aws/cluster/c2': '1' }, 'c1')).toBe(true);
    expect(subnetExcluded({ 'cni.networking.k8s.aws/cluster/c1': '1' }, 'c1')).toBe(false);
    expect(managedEniTags('i-1', 'c1', { team: 'a', 'x.k8s.amazonaws.com/y': 'z' })).toEqual({
      team: 'a',
      'node.k8s.amazonaws.com/instance_id': 'i-1',
      'cluster.k8s.amazonaws.com/name': 'c1',
      'eks:eni:owner': 'amazon-vpc-cni',
    });
  });

  it('remembers the trunk ENI and its MAC while it is attached (security groups for pods)', async () => {
    const imds = (eniId: string, mac: string) => ({
      mac,
      eniId,
      deviceNumber: 2,
      networkCard: 0,
      subnetId: 'subnet-1',
      subnetIpv4Cidr: '10.0.0.0/24',
      vpcId: 'vpc-1',
      vpcIpv4Cidrs: ['10.0.0.0/16'],
      securityGroupIds: [],
      ipv4Addresses: ['10.0.0.7'],
      ipv4Prefixes: [],
      ipv6Addresses: [],
      ipv6Prefixes: [],
      subnetIpv6Cidrs: [],
      vpcIpv6Cidrs: [],
    });
    const trunk = imds('eni-trunk', '0A:00:00:00:00:AA');
    let attached = [{ eniId: 'eni-trunk', tags: {}, interfaceType: 'trunk' } as never];
    const enis = new NodeEnis({
      policy: { instanceId: 'i-1', primaryEniId: 'eni-p', manageUntaggedEnis: true, clusterName: '' },
      describeEnis: async () => attached,
      desiredTags: {},
      log: silentLogger,
    });
    expect(enis.trunk()).toBeUndefined();
    await enis.select([trunk]);
    expect(enis.trunk()).toEqual({ eniId: 'eni-trunk', mac: '0a:00:00:00:00:aa' });
    expect(enis.unmanaged().map((u) => u.reason)).toEqual(['trunk']);
    // Detached: gone from IMDS, forgotten.
    attached = [];
    await enis.select([]);
    expect(enis.trunk()).toBeUndefined();
  });

  it('whatever ENIs EC2 shows, an unmanaged one is never mutated, adopted or tagged', async () => {
    const extra = fc.record({
      kind: fc.constantFrom<Kind>(
        'no-manage',
        'untagged',
        'other-instance',
        'trunk',
        'excluded-subnet',
        'ours',
      ),
      addresses: fc.integer({ min: 0, max: 3 }),
      afterStart: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(
        // EC2 attaches at most one trunk interface per instance.
        fc
          .array(extra, { minLength: 1, maxLength: 4 })
          .filter((a) => a.filter((x) => x.kind === 'trunk').length <= 1),
        fc.boolean(),
        fc.integer({ min: 0, max: 40 }),
        async (extras, manageUntagged, warmIpTarget) => {
          const w = await world(extras, manageUntagged, warmIpTarget);
          try {
            for (const c of w.created) if (!c.extra.afterStart) await w.attach(c.id);
            const unmanaged = w.created
              .filter((c) => expectedUnmanaged(c.extra.kind, manageUntagged))
              .map((c) => c.id);
            const mutations: string[] = [];
            const base = createEniManager({
              ec2: w.ec2,
              metadata: w.metadata,
              node: allocationNodeOf(w.node),
            });
            const enis = new NodeEnis({
              policy: {
                instanceId: INSTANCE,
                primaryEniId: w.node.primaryEni.eniId,
                manageUntaggedEnis: manageUntagged,
                clusterName: '',
              },
              describeEnis: () => base.describeEnis(),
              subnetTags: async (ids) => {
                const out = await w.ec2.call('DescribeSubnets', { SubnetIds: [...ids] });
                return new Map(
                  (out.Subnets ?? []).map((s) => [
                    s.SubnetId!,
                    Object.fromEntries((s.Tags ?? []).map((t) => [t.Key!, t.Value ?? ''])),
                  ]),
                );
              },
              tagEni: (id, tags) => eni.tagEni(id, tags),
              desiredTags: managedEniTags(INSTANCE, '', {}),
              log: silentLogger,
            });
            const eni = guardEniManager(recording(base, mutations), enis);
            const datastore = new Datastore({
              clock: w.clock,
              checkpointer: new InMemoryGroupCommitCheckpointer(),
              cooldownMs: 0,
            });
            const loop = testPool(datastore, eni, warmIpTarget, {
              limits: {
                maxEnis: 8,
                ipv4PerEni: 30,
                maxPods: 234,
                get unmanagedEnis() {
                  return enis.unmanagedCount();
                },
              },
              now: () => w.clock.now(),
              routeTableId,
            });
            const before = new Map(unmanaged.map((id) => [id, snapshot(w.sim, id)]));
            await restoreNode({
              datastore,
              checkpoint: null,
              listImdsEnis: () => w.metadata.listEnis(),
              describeEnis: () => base.describeEnis(),
              selectManaged: (imds, seen) => enis.select(imds, seen),
              adoptEni: (e) => loop.adoptEni(e),
              podExists: () => true,
              confirmWaitMs: 0,
              retryMs: 0,
              sleep: async () => {},
              now: () => 0,
              log: silentLogger,
            });
            for (let i = 0; i < 4; i++) await loop.tick();
            for (const c of w.created) if (c.extra.afterStart) await w.attach(c.id);
            for (const id of unmanaged) before.set(id, snapshot(w.sim, id));
            const reconcile = () =>
              reconcileWithImds({
                datastore,
                metadata: w.metadata,
                describeEnis: (ids) => base.describeEnis(ids),
                selectManaged: (imds) => enis.select(imds),
                log: silentLogger,
                now: () => w.clock.now(),
                adoptEni: (e) => loop.adoptEni(e),
                teardownEni: async () => {},
                recentlyReleased: loop.recentlyReleased,
              });
            await reconcile();
            for (let i = 0; i < 4; i++) await loop.tick();
            await reconcile();

            const inDatastore = new Set(datastore.eniIds());
            for (const id of unmanaged) {
              expect(inDatastore.has(id), `${id} adopted`).toBe(false);
              expect(
                mutations.filter((m) => m.endsWith(` ${id}`)),
                `${id} mutated`,
              ).toEqual([]);
              expect(snapshot(w.sim, id), `${id} changed in EC2`).toBe(before.get(id));
              expect(w.sim.state.eni(id)?.attachment?.instanceId).toBe(INSTANCE);
            }
            expect(
              enis
                .unmanaged()
                .map((u) => u.eniId)
                .sort(),
            ).toEqual([...unmanaged].sort());
            // The managed ones we found are adopted and carry this instance's tag.
            for (const c of w.created) {
              if (unmanaged.includes(c.id)) continue;
              expect(inDatastore.has(c.id), `${c.id} (${c.extra.kind}) adopted`).toBe(true);
              expect(w.sim.state.eni(c.id)?.tags.get('node.k8s.amazonaws.com/instance_id')).toBe(INSTANCE);
            }
          } finally {
            await w.close();
          }
        },
      ),
      { numRuns: 25 },
    );
  }, 120_000);
});
