import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Ec2State, INSTANCE_TYPES, isEc2SimError, ManualClock, seededRandom } from '../src/index.js';
import { parseIpv4, parseIpv4Cidr } from '../src/ip.js';

const SUBNET = 'subnet-0a000000000000001';
const NODE = 'i-0a000000000000001';

function world(seed: number): Ec2State {
  const state = new Ec2State({
    clock: new ManualClock(),
    random: seededRandom(seed),
    accountId: '123456789012',
    addressAllocation: seed % 2 === 0 ? 'random' : 'sequential',
  });
  state.addVpc({ id: 'vpc-0a000000000000001', cidrBlocks: ['10.0.0.0/16'], ipv6CidrBlock: undefined });
  state.addSubnet({
    id: SUBNET,
    vpcId: 'vpc-0a000000000000001',
    cidrBlock: '10.0.0.0/26',
    ipv6CidrBlock: undefined,
    availabilityZone: 'us-west-2a',
    tags: new Map(),
  });
  state.addInstance({
    id: NODE,
    type: INSTANCE_TYPES.get('t3.medium')!,
    subnetId: SUBNET,
    securityGroupIds: [],
  });
  return state;
}

type Op =
  | { op: 'create'; count: number; prefixes: number }
  | { op: 'assign'; eni: number; count: number }
  | { op: 'assignPrefix'; eni: number; count: number }
  | { op: 'assignExplicit'; eni: number; host: number }
  | { op: 'unassign'; eni: number; which: number }
  | { op: 'unassignPrefix'; eni: number }
  | { op: 'attach'; eni: number; device: number }
  | { op: 'detach'; eni: number }
  | { op: 'delete'; eni: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    op: fc.constant('create' as const),
    count: fc.integer({ min: 0, max: 12 }),
    prefixes: fc.integer({ min: 0, max: 2 }),
  }),
  fc.record({ op: fc.constant('assign' as const), eni: fc.nat(9), count: fc.integer({ min: 1, max: 8 }) }),
  fc.record({
    op: fc.constant('assignPrefix' as const),
    eni: fc.nat(9),
    count: fc.integer({ min: 1, max: 3 }),
  }),
  fc.record({
    op: fc.constant('assignExplicit' as const),
    eni: fc.nat(9),
    host: fc.integer({ min: 0, max: 70 }),
  }),
  fc.record({ op: fc.constant('unassign' as const), eni: fc.nat(9), which: fc.nat(60) }),
  fc.record({ op: fc.constant('unassignPrefix' as const), eni: fc.nat(9) }),
  fc.record({ op: fc.constant('attach' as const), eni: fc.nat(9), device: fc.integer({ min: 0, max: 4 }) }),
  fc.record({ op: fc.constant('detach' as const), eni: fc.nat(9) }),
  fc.record({ op: fc.constant('delete' as const), eni: fc.nat(9) }),
);

function apply(state: Ec2State, o: Op): void {
  const enis = state.enis();
  const pick = (i: number) => enis[i % enis.length]!;
  switch (o.op) {
    case 'create':
      state.createNetworkInterface({
        subnetId: SUBNET,
        ...(o.count > 0 ? { secondaryCount: o.count } : {}),
        ...(o.prefixes > 0 && o.count === 0 ? { ipv4PrefixCount: o.prefixes } : {}),
      });
      return;
    case 'assign':
      state.assignPrivateIps(pick(o.eni).id, { count: o.count });
      return;
    case 'assignPrefix':
      state.assignPrivateIps(pick(o.eni).id, { prefixCount: o.count });
      return;
    case 'assignExplicit':
      state.assignPrivateIps(pick(o.eni).id, { addresses: [`10.0.0.${o.host}`] });
      return;
    case 'unassign': {
      const e = pick(o.eni);
      state.unassignPrivateIps(e.id, [e.privateIps[o.which % e.privateIps.length]!.value], []);
      return;
    }
    case 'unassignPrefix': {
      const e = pick(o.eni);
      state.unassignPrivateIps(
        e.id,
        [],
        e.ipv4Prefixes.length > 0 ? [e.ipv4Prefixes[0]!.value] : ['10.0.0.48/28'],
      );
      return;
    }
    case 'attach':
      state.attach(pick(o.eni).id, NODE, o.device, undefined);
      return;
    case 'detach': {
      const a = pick(o.eni).attachment;
      state.detach(a ? a.id : 'eni-attach-0000000000000000');
      return;
    }
    case 'delete':
      state.deleteNetworkInterface(pick(o.eni).id);
      return;
  }
}

const dump = (s: Ec2State) => JSON.stringify({ ...(s.snapshot() as object), time: undefined });

describe('Ec2State under random operation sequences', () => {
  it('keeps its invariants, and a rejected operation changes nothing', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.array(opArb, { maxLength: 60 }), (seed, ops) => {
        const state = world(seed);
        for (const o of ops) {
          const before = dump(state);
          try {
            apply(state, o);
          } catch (e) {
            if (!isEc2SimError(e)) throw e;
            expect(dump(state)).toBe(before);
          }
          // Invariants: every address is held once, inside the subnet, never reserved; the free count adds
          // up; /28 prefixes are aligned; limits hold.
          const cidr = parseIpv4Cidr('10.0.0.0/26')!;
          const held = new Set<number>();
          let used = 0;
          for (const e of state.enis()) {
            for (const a of e.privateIps) {
              const n = parseIpv4(a.value)!;
              expect(held.has(n)).toBe(false);
              held.add(n);
              expect(n - cidr.base).toBeGreaterThanOrEqual(4);
              expect(n - cidr.base).toBeLessThan(63);
              used++;
            }
            for (const p of e.ipv4Prefixes) {
              const c = parseIpv4Cidr(p.value)!;
              expect(c.length).toBe(28);
              for (let n = c.base; n < c.base + 16; n++) {
                expect(held.has(n)).toBe(false);
                held.add(n);
              }
              used += 16;
            }
            const limit = e.attachment ? 6 : 50;
            expect(e.privateIps.length + e.ipv4Prefixes.length).toBeLessThanOrEqual(limit);
          }
          expect(state.subnet(SUBNET)!.ipv4.available).toBe(64 - 5 - used);
          expect(state.attachedEnis(NODE).length).toBeLessThanOrEqual(3);
          const devices = state.attachedEnis(NODE).map((e) => e.attachment!.deviceIndex);
          expect(new Set(devices).size).toBe(devices.length);
        }
      }),
      { numRuns: 150 },
    );
  });
});

type TrunkOp =
  | { op: 'create'; trunk: boolean }
  | { op: 'attach'; eni: number; device: number }
  | { op: 'detach'; eni: number }
  | { op: 'associate'; branch: number; trunk: number; vlan: number }
  | { op: 'disassociate'; which: number }
  | { op: 'delete'; eni: number };

const trunkOpArb: fc.Arbitrary<TrunkOp> = fc.oneof(
  fc.record({ op: fc.constant('create' as const), trunk: fc.boolean() }),
  fc.record({ op: fc.constant('attach' as const), eni: fc.nat(15), device: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ op: fc.constant('detach' as const), eni: fc.nat(15) }),
  fc.record({
    op: fc.constant('associate' as const),
    branch: fc.nat(15),
    trunk: fc.nat(15),
    vlan: fc.integer({ min: 1, max: 12 }),
  }),
  fc.record({ op: fc.constant('disassociate' as const), which: fc.nat(12) }),
  fc.record({ op: fc.constant('delete' as const), eni: fc.nat(15) }),
);

const TRUNK_NODE = 'i-0b000000000000002';

function trunkWorld(seed: number): Ec2State {
  const state = world(seed);
  // m5.large: 3 interfaces, trunking-compatible, 9 branches per trunk.
  state.addInstance({
    id: TRUNK_NODE,
    type: INSTANCE_TYPES.get('m5.large')!,
    subnetId: SUBNET,
    securityGroupIds: [],
  });
  return state;
}

function applyTrunk(state: Ec2State, o: TrunkOp): void {
  const enis = state.enis();
  const pick = (i: number) => enis[i % enis.length]!;
  switch (o.op) {
    case 'create':
      state.createNetworkInterface({ subnetId: SUBNET, ...(o.trunk ? { interfaceType: 'trunk' } : {}) });
      return;
    case 'attach':
      state.attach(pick(o.eni).id, TRUNK_NODE, o.device, undefined);
      return;
    case 'detach': {
      const a = pick(o.eni).attachment;
      state.detach(a ? a.id : 'eni-attach-0000000000000000');
      return;
    }
    case 'associate':
      state.associateTrunkInterface({
        branchEniId: pick(o.branch).id,
        trunkEniId: pick(o.trunk).id,
        vlanId: o.vlan,
      });
      return;
    case 'disassociate': {
      const all = state.trunkAssociations();
      state.disassociateTrunkInterface(
        all.length > 0 ? all[o.which % all.length]!.id : 'trunk-assoc-00000000',
      );
      return;
    }
    case 'delete':
      state.deleteNetworkInterface(pick(o.eni).id);
      return;
  }
}

describe('Ec2State trunks under random operation sequences', () => {
  it('never reuses a VLAN id on a trunk, never exceeds the branch limit, and counts the trunk as an ENI', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.array(trunkOpArb, { maxLength: 80 }), (seed, ops) => {
        const state = trunkWorld(seed);
        for (const o of ops) {
          const before = dump(state);
          try {
            applyTrunk(state, o);
          } catch (e) {
            if (!isEc2SimError(e)) throw e;
            expect(dump(state)).toBe(before);
          }
          const attached = state.attachedEnis(TRUNK_NODE);
          // The trunk is one of at most 3 interfaces; at most one trunk per instance.
          expect(attached.length).toBeLessThanOrEqual(3);
          expect(attached.filter((e) => e.interfaceType === 'trunk').length).toBeLessThanOrEqual(1);
          for (const trunk of state.enis().filter((e) => e.interfaceType === 'trunk')) {
            const vlans = state.trunkAssociations(trunk.id).map((a) => a.vlanId);
            expect(new Set(vlans).size).toBe(vlans.length);
            expect(vlans.length).toBeLessThanOrEqual(9);
          }
          for (const a of state.trunkAssociations()) {
            const branch = state.eni(a.branchEniId)!;
            expect(branch.interfaceType).toBe('branch');
            expect(branch.attachment).toBeUndefined();
            expect(state.eni(a.trunkEniId)!.interfaceType).toBe('trunk');
          }
          const branches = state.enis().filter((e) => e.interfaceType === 'branch').length;
          expect(branches).toBe(state.trunkAssociations().length);
        }
      }),
      { numRuns: 150 },
    );
  });
});
