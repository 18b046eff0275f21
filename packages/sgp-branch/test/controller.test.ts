import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type BranchClusterView,
  BranchController,
  type BranchNodeView,
  type BranchPodView,
  decideBranchActions,
  lowestFreeVlan,
  parsePodEniAnnotation,
  type SecurityGroupPolicy,
} from '../src/index.js';
import { FakeBranchCloud } from '../src/testing/index.js';

const POLICY: SecurityGroupPolicy = {
  namespace: 'shop',
  name: 'db',
  podSelector: { matchLabels: { app: 'db-client' } },
  groupIds: ['sg-0db'],
};
const COOLDOWN = 30_000;

function node(name: string, limit: number, trunk = true): BranchNodeView {
  return {
    name,
    subnetId: 'subnet-1',
    branchLimit: limit,
    instanceGroupIds: ['sg-0node'],
    ...(trunk ? { trunkEniId: `eni-t${name}` } : {}),
  };
}

/** A pod as the webhook admits it: it requests a branch when the policy selects it, unless told otherwise. */
function pod(
  uid: string,
  nodeName: string,
  app = 'db-client',
  requestsBranch = app === 'db-client',
): BranchPodView {
  return {
    namespace: 'shop',
    name: `p-${uid}`,
    uid,
    nodeName,
    labels: { app },
    serviceAccountLabels: {},
    requestsBranch,
  };
}

/** A tiny cluster whose pods' annotations come from what the fake wrote. */
class World {
  readonly cloud = new FakeBranchCloud();
  nodes: BranchNodeView[] = [];
  pods = new Map<string, BranchPodView>();
  constructor(nodes: BranchNodeView[]) {
    this.nodes = nodes;
    this.cloud.addSubnet('subnet-1', '10.0.0.0/16');
    for (const n of nodes)
      if (n.trunkEniId)
        this.cloud.addTrunk({ eniId: n.trunkEniId, nodeName: n.name, branchLimit: n.branchLimit });
  }
  add(p: BranchPodView): void {
    this.pods.set(p.uid, p);
    this.cloud.livePods.add(p.uid);
  }
  remove(uid: string): void {
    this.pods.delete(uid);
    this.cloud.livePods.delete(uid);
  }
  view(): BranchClusterView {
    const pods = [...this.pods.values()].map((p) => ({
      ...p,
      annotation: this.cloud.annotations.get(p.uid),
    }));
    return { nodes: this.nodes, pods, policies: [POLICY] };
  }
}

describe('lowestFreeVlan', () => {
  it('gives the lowest id in 1..limit not used, none when full', () => {
    expect(lowestFreeVlan(new Set(), 3)).toBe(1);
    expect(lowestFreeVlan(new Set([1, 3]), 3)).toBe(2);
    expect(lowestFreeVlan(new Set([1, 2, 3]), 3)).toBeUndefined();
    expect(lowestFreeVlan(new Set(), 0)).toBeUndefined();
    expect(() => lowestFreeVlan(new Set(), 4095)).toThrow();
  });
});

describe('decideBranchActions', () => {
  it('creates for selected pods only, with distinct VLANs, and advertises capacity', () => {
    const view: BranchClusterView = {
      nodes: [node('a', 2)],
      pods: [pod('1', 'a'), pod('2', 'a', 'web'), pod('3', 'a')],
      policies: [POLICY],
    };
    const actions = decideBranchActions(
      view,
      { owned: new Map(), cooling: new Map(), capacity: new Map() },
      0,
      COOLDOWN,
    );
    expect(
      actions.map((a) =>
        a.kind === 'create'
          ? `create ${a.pod.uid} vlan ${a.vlanId} ${a.groupIds}`
          : a.kind === 'capacity'
            ? `capacity ${a.nodeName} ${a.capacity}`
            : a.kind,
      ),
    ).toEqual(['create 1 vlan 1 sg-0db', 'create 3 vlan 2 sg-0db', 'capacity a 2']);
  });

  it('names why a pod gets no branch: no trunk, an instance that cannot trunk, the branch limit', () => {
    const view: BranchClusterView = {
      nodes: [node('a', 9, false), node('b', 0, false), node('c', 1)],
      pods: [pod('1', 'a'), pod('2', 'b'), pod('3', 'c'), pod('4', 'c')],
      policies: [POLICY],
    };
    const fails = decideBranchActions(
      view,
      { owned: new Map(), cooling: new Map(), capacity: new Map() },
      0,
      COOLDOWN,
    )
      .filter((a) => a.kind === 'fail')
      .map((a) => (a.kind === 'fail' ? `${a.pod.uid} ${a.code}` : ''));
    expect(fails).toEqual(['1 NO_TRUNK', '2 INSTANCE_NOT_TRUNKABLE', '4 BRANCH_LIMIT_REACHED']);
  });
  it('gives no branch to a pod a policy selects that does not request the resource, and says so', () => {
    const view: BranchClusterView = {
      nodes: [node('a', 2)],
      pods: [pod('1', 'a', 'db-client', false), pod('2', 'a', 'web', false), pod('3', 'a')],
      policies: [POLICY],
    };
    const actions = decideBranchActions(
      view,
      { owned: new Map(), cooling: new Map(), capacity: new Map([['a', 2]]) },
      0,
      COOLDOWN,
    );
    expect(
      actions.map((a) =>
        a.kind === 'create'
          ? `create ${a.pod.uid} vlan ${a.vlanId}`
          : a.kind === 'unrequested'
            ? `unrequested ${a.pod.uid} ${a.groupIds}`
            : a.kind,
      ),
    ).toEqual(['unrequested 1 sg-0db', 'create 3 vlan 1']);
  });

  it("gives a pod that requests a branch but that no policy selects a branch with its node's instance groups", () => {
    const view: BranchClusterView = {
      nodes: [node('a', 9), { ...node('b', 9), instanceGroupIds: ['sg-0cn1', 'sg-0cn2'] }, node('c', 9)],
      pods: [
        pod('1', 'a'),
        pod('2', 'a', 'web', true),
        pod('3', 'b', 'web', true),
        // Its ServiceAccount is not known yet: a policy may select it by the ServiceAccount's labels.
        { ...pod('4', 'a', 'web', true), serviceAccountMissing: true },
        // Known to be selected by its pod labels: the ServiceAccount does not matter.
        { ...pod('5', 'a'), serviceAccountMissing: true },
        // A node without instance groups: EC2 would use the VPC's default group; refused instead.
        pod('6', 'c', 'web', true),
      ],
      policies: [POLICY],
    };
    const nodes = view.nodes.map((n) => (n.name === 'c' ? { ...n, instanceGroupIds: [] } : n));
    const actions = decideBranchActions(
      { ...view, nodes },
      { owned: new Map(), cooling: new Map(), capacity: new Map(nodes.map((n) => [n.name, 9])) },
      0,
      COOLDOWN,
    );
    expect(
      actions.map((a) =>
        a.kind === 'create'
          ? `create ${a.pod.uid} ${a.node.name} vlan ${a.vlanId} ${a.groupSource} ${a.groupIds}`
          : a.kind === 'fail'
            ? `fail ${a.pod.uid} ${a.code}`
            : a.kind,
      ),
    ).toEqual([
      'create 1 a vlan 1 policy sg-0db',
      'create 2 a vlan 2 instance sg-0node',
      'create 3 b vlan 1 instance sg-0cn1,sg-0cn2',
      'create 5 a vlan 3 policy sg-0db',
      'fail 6 INVALID_ARGUMENT',
    ]);
  });
});

describe('BranchController with the fake cloud', () => {
  it('creates, associates and annotates; deleting the pod frees the branch after the cooldown only', async () => {
    const w = new World([node('a', 4)]);
    const c = new BranchController(w.cloud, { cooldownMs: COOLDOWN });
    w.add(pod('1', 'a'));
    w.add(pod('2', 'a', 'web'));
    const out = await c.reconcile(w.view(), 0);
    expect(out).toEqual([expect.objectContaining({ podUid: '1', status: 'annotated' })]);
    const branch = parsePodEniAnnotation(w.cloud.annotations.get('1'));
    expect(branch).toMatchObject({ vlanId: 1, subnetCidr: '10.0.0.0/16' });
    expect(w.cloud.groupsOf(branch.eniId)).toEqual(['sg-0db']);
    expect(w.cloud.vlansOn('eni-ta')).toEqual([1]);
    expect(w.cloud.capacity.get('a')).toBe(4);
    expect(w.cloud.annotations.has('2')).toBe(false);

    w.remove('1');
    await c.reconcile(w.view(), 1_000);
    expect(w.cloud.enis.size).toBe(1);
    await c.reconcile(w.view(), 1_000 + COOLDOWN - 1);
    expect(w.cloud.enis.size).toBe(1);
    await c.reconcile(w.view(), 1_000 + COOLDOWN);
    expect(w.cloud.enis.size).toBe(0);
    expect(w.cloud.associations.size).toBe(0);
    expect(w.cloud.violations).toEqual([]);
  });

  it('annotates only pods that request the resource; a branch made but not annotated for one that does not is released', async () => {
    const w = new World([node('a', 4)]);
    const c = new BranchController(w.cloud, { cooldownMs: COOLDOWN });
    w.add(pod('1', 'a', 'db-client', false));
    const out = await c.reconcile(w.view(), 0);
    expect(out).toEqual([{ podUid: '1', status: 'unrequested', groupIds: ['sg-0db'] }]);
    expect(w.cloud.enis.size).toBe(0);
    expect(w.cloud.annotations.has('1')).toBe(false);

    // A branch made for pod 2 before its annotation, when the request was not yet required (an older
    // controller's ledger, rebuilt from the cloud): not annotated now, released and deleted after the cooldown.
    w.add(pod('2', 'a', 'db-client', false));
    const made = await w.cloud.createBranchEni({
      nodeName: 'a',
      pod: { namespace: 'shop', name: 'p-2', uid: '2' },
      subnetId: 'subnet-1',
      groupIds: ['sg-0db'],
    });
    await w.cloud.associateBranch({ trunkEniId: 'eni-ta', branchEniId: made.eniId, vlanId: 1 });
    const again = new BranchController(w.cloud, { cooldownMs: COOLDOWN });
    await again.reconcile(w.view(), 1_000);
    expect(again.ledger().owned.size).toBe(0);
    await again.reconcile(w.view(), 1_000 + COOLDOWN);
    expect(w.cloud.enis.size).toBe(0);
    expect(w.cloud.annotations.has('2')).toBe(false);
    expect(w.cloud.violations).toEqual([]);
  });

  it("a pod that requests a branch and that no policy selects is annotated with a branch in its node's groups", async () => {
    const w = new World([node('a', 4)]);
    const c = new BranchController(w.cloud, { cooldownMs: COOLDOWN });
    w.add(pod('1', 'a', 'web', true));
    w.add(pod('2', 'a'));
    const out = await c.reconcile(w.view(), 0);
    expect(out).toEqual([
      expect.objectContaining({
        podUid: '1',
        status: 'annotated',
        groupSource: 'instance',
        groupIds: ['sg-0node'],
      }),
      expect.objectContaining({
        podUid: '2',
        status: 'annotated',
        groupSource: 'policy',
        groupIds: ['sg-0db'],
      }),
    ]);
    const branch = parsePodEniAnnotation(w.cloud.annotations.get('1'));
    expect(w.cloud.groupsOf(branch.eniId)).toEqual(['sg-0node']);
    // Annotated: the next pass has nothing to do for it, and a policy that selects it later changes nothing.
    expect(await c.reconcile({ ...w.view(), policies: [{ ...POLICY, podSelector: {} }] }, 1_000)).toEqual([]);
    expect(w.cloud.groupsOf(branch.eniId)).toEqual(['sg-0node']);
    expect(w.cloud.violations).toEqual([]);
  });

  it('a new cooldown applies to branches already cooling; a bad one is refused and changes nothing', async () => {
    const w = new World([node('a', 4)]);
    const c = new BranchController(w.cloud, { cooldownMs: COOLDOWN });
    w.add(pod('1', 'a'));
    await c.reconcile(w.view(), 0);
    w.remove('1');
    await c.reconcile(w.view(), 1_000);
    expect(c.ledger().cooling.size).toBe(1);
    expect(() => c.setCooldownMs(-1)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => c.setCooldownMs(Number.NaN)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(c.cooldownMs).toBe(COOLDOWN);
    c.setCooldownMs(90_000);
    await c.reconcile(w.view(), 1_000 + COOLDOWN);
    expect(w.cloud.enis.size).toBe(1);
    c.setCooldownMs(10_000);
    expect(c.cooldownMs).toBe(10_000);
    await c.reconcile(w.view(), 11_000);
    expect(w.cloud.enis.size).toBe(0);
    expect(w.cloud.violations).toEqual([]);
  });

  it('a cooling branch keeps its VLAN: the limit error until it is deleted', async () => {
    const w = new World([node('a', 1)]);
    const c = new BranchController(w.cloud, { cooldownMs: COOLDOWN });
    w.add(pod('1', 'a'));
    await c.reconcile(w.view(), 0);
    w.remove('1');
    w.add(pod('2', 'a'));
    const out = await c.reconcile(w.view(), 10);
    expect(out[0]!.error?.code).toBe('BRANCH_LIMIT_REACHED');
    // The pass that deletes the cooled branch gives its VLAN to the waiting pod.
    const later = await c.reconcile(w.view(), 10 + COOLDOWN);
    expect(later).toEqual([expect.objectContaining({ podUid: '2', status: 'annotated' })]);
    expect(w.cloud.violations).toEqual([]);
  });

  it('a lost associate answer leaves nothing behind and no VLAN given twice', async () => {
    const w = new World([node('a', 2)]);
    const c = new BranchController(w.cloud, { cooldownMs: COOLDOWN });
    w.cloud.faults = (m, n) => (m === 'associateBranch' && n === 1 ? 'after' : undefined);
    w.add(pod('1', 'a'));
    const first = await c.reconcile(w.view(), 0);
    expect(first[0]!.error?.code).toBe('CLOUD');
    // Undone at once (disassociated, deleted), so VLAN 1 is free again for the retry.
    expect([w.cloud.enis.size, w.cloud.associations.size]).toEqual([0, 0]);
    await c.reconcile(w.view(), 1);
    expect(parsePodEniAnnotation(w.cloud.annotations.get('1')).vlanId).toBe(1);
    w.remove('1');
    await c.reconcile(w.view(), 2);
    await c.reconcile(w.view(), 2 + COOLDOWN);
    expect([w.cloud.enis.size, w.cloud.associations.size, w.cloud.violations]).toEqual([0, 0, []]);
  });
});

describe('properties (fake cloud with injected faults)', () => {
  type Step =
    | { kind: 'add'; node: number }
    | { kind: 'remove'; index: number }
    | { kind: 'tick'; ms: number }
    | { kind: 'restart' }
    | { kind: 'sweep' };
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ kind: fc.constant('add' as const), node: fc.integer({ min: 0, max: 1 }) }),
    fc.record({ kind: fc.constant('remove' as const), index: fc.nat() }),
    fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 2 * COOLDOWN }) }),
    fc.constant({ kind: 'restart' as const }),
    fc.constant({ kind: 'sweep' as const }),
  );

  it('never gives a VLAN twice on a trunk nor above its limit, and leaks nothing once faults stop (any concurrency)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 40 }),
        fc.array(
          fc.constantFrom<'before' | 'after' | undefined>('before', 'after', undefined, undefined, undefined),
          { minLength: 8, maxLength: 64 },
        ),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 4 }),
        async (steps, faultTape, limit, concurrency) => {
          const w = new World([node('a', limit), node('b', limit)]);
          let calls = 0;
          w.cloud.faults = () => faultTape[calls++ % faultTape.length];
          let c = new BranchController(w.cloud, { cooldownMs: COOLDOWN, concurrency });
          let now = 0;
          let uid = 0;
          const check = () => {
            expect(w.cloud.violations).toEqual([]);
            for (const t of ['eni-ta', 'eni-tb']) {
              const vlans = w.cloud.vlansOn(t);
              expect(new Set(vlans).size).toBe(vlans.length);
              expect(vlans.every((v) => v >= 1 && v <= limit)).toBe(true);
            }
            // Annotated, live pods on one trunk never share a VLAN.
            for (const n of ['a', 'b']) {
              const vlans = [...w.pods.values()]
                .filter((p) => p.nodeName === n && w.cloud.annotations.has(p.uid))
                .map((p) => parsePodEniAnnotation(w.cloud.annotations.get(p.uid)).vlanId);
              expect(new Set(vlans).size).toBe(vlans.length);
            }
          };
          for (const s of steps) {
            if (s.kind === 'add') w.add(pod(String(++uid), s.node === 0 ? 'a' : 'b'));
            else if (s.kind === 'remove') {
              const uids = [...w.pods.keys()];
              if (uids.length > 0) w.remove(uids[s.index % uids.length]!);
            } else if (s.kind === 'tick') now += s.ms;
            else if (s.kind === 'restart') {
              c = new BranchController(w.cloud, { cooldownMs: COOLDOWN, concurrency });
              await c.recover(w.view(), now).catch(() => undefined);
            } else await c.sweepOrphans('a', now).catch(() => undefined);
            await c.reconcile(w.view(), now);
            check();
          }
          // Faults stop: after the cooldowns every node serves min(pods, limit) pods, each annotated.
          w.cloud.faults = () => undefined;
          for (const n of ['a', 'b']) await c.sweepOrphans(n, now);
          for (let i = 0; i < 3; i++) {
            now += COOLDOWN;
            await c.reconcile(w.view(), now);
          }
          check();
          for (const n of ['a', 'b']) {
            const live = [...w.pods.values()].filter((p) => p.nodeName === n);
            const served = live.filter((p) => w.cloud.annotations.has(p.uid));
            expect(served.length).toBe(Math.min(live.length, limit));
          }
          // Every pod goes, time passes: nothing is left in the cloud.
          for (const u of [...w.pods.keys()]) w.remove(u);
          for (const n of ['a', 'b']) await c.sweepOrphans(n, now);
          for (let i = 0; i < 3; i++) {
            now += COOLDOWN;
            await c.reconcile(w.view(), now);
          }
          check();
          expect([w.cloud.enis.size, w.cloud.associations.size]).toEqual([0, 0]);
        },
      ),
      { numRuns: 200 },
    );
  });
});
