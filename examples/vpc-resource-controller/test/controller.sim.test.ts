import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { POD_ENI_RESOURCE, parsePodEniAnnotation } from '@vpc-cni-kit/sgp-branch';
import { eventually } from '@vpc-cni-kit/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { jsonLogger } from '../src/index.js';
import { DB_CLIENT_SG, NODE_SG, SUBNET, startWorld, type World } from './support/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

function capacity(w: World, node: string): string | undefined {
  const n = w.kube.objects.get('v1', 'nodes', node) as { status?: { capacity?: Record<string, string> } };
  return n?.status?.capacity?.['vpc.amazonaws.com/pod-eni'];
}

function podEvents(w: World, pod: string) {
  return (
    w.kube.objects.list('v1', 'events', 'default') as {
      involvedObject?: { name?: string };
      reason?: string;
      message?: string;
      type?: string;
    }[]
  ).filter((e) => e.involvedObject?.name === pod);
}

describe('vpc-resource-controller against ec2-simulator and kube-simulator', () => {
  it('gives a pod selected by a SecurityGroupPolicy a branch ENI in its node subnet with the policy groups, annotates it and advertises capacity', async () => {
    world = await startWorld();
    world.policy();
    await world.controller();

    // A trunk per node whose CNINode asks for SecurityGroupsForPods, at the highest device index (m5.large: 2).
    const trunks = await eventually('trunks', () => {
      const t = world!.ec2.state.enis().filter((e) => e.interfaceType === 'trunk' && e.attachment);
      return t.length === 2 ? t : undefined;
    });
    for (const t of trunks) {
      expect(t.attachment?.deviceIndex).toBe(2);
      expect(t.description).toBe('aws-k8s-trunk-eni');
      expect(t.groups).toEqual(['sg-0a000000000000001']);
    }
    await eventually(
      'capacity advertised',
      () => capacity(world!, 'node-1') === '9' && capacity(world!, 'node-2') === '9',
    );

    const { uid } = world.pod('client-1', 'node-1', { app: 'db-client' });
    world.pod('plain-1', 'node-1', { app: 'web' }, { requestsPodEni: false });
    const text = await eventually('annotation', () => world!.annotation('client-1'));
    const branch = parsePodEniAnnotation(text, { family: 4 });
    const eni = world.ec2.state.eni(branch.eniId)!;
    expect(eni.subnetId).toBe(SUBNET);
    expect(eni.groups).toEqual([DB_CLIENT_SG]);
    expect(eni.tags.get('vpcresources.k8s.aws/pod-uid')).toBe(uid);
    expect(branch.mac).toBe(eni.mac);
    expect(branch.ipv4).toBe(eni.privateIps[0]?.value);
    expect(branch.subnetCidr).toBe('10.0.0.0/24');
    expect(branch.vlanId).toBe(1);
    const assoc = world.ec2.state.trunkAssociations().find((a) => a.branchEniId === branch.eniId);
    expect(assoc?.vlanId).toBe(1);
    expect(assoc?.trunkEniId).toBe(
      trunks.find((t) => t.attachment?.instanceId === 'i-0a000000000000001')?.id,
    );
    // The ordinary pod gets nothing.
    expect(world.annotation('plain-1')).toBeUndefined();
    expect(world.branches()).toHaveLength(1);
    await eventually('ResourceAllocated event', () =>
      podEvents(world!, 'client-1').some((e) => e.reason === 'ResourceAllocated'),
    );
  });

  it('a pod a policy selects that does not request vpc.amazonaws.com/pod-eni gets no branch ENI, no annotation and one Warning event', async () => {
    world = await startWorld();
    world.policy();
    await world.controller();
    // Admitted while the pod webhook was down (failurePolicy Ignore): selected, but without the resource.
    world.pod('late-1', 'node-1', { app: 'db-client' }, { requestsPodEni: false });
    world.pod('client-1', 'node-1', { app: 'db-client' });
    await eventually('annotation', () => world!.annotation('client-1'));
    const ev = await eventually('event', () =>
      podEvents(world!, 'late-1').find((e) => e.reason === 'BranchENINotRequested'),
    );
    expect(ev.type).toBe('Warning');
    expect(ev.message).toContain(`does not request ${POD_ENI_RESOURCE}`);
    expect(ev.message).toContain(DB_CLIENT_SG);
    // Passes go on (a tick, another pod): still nothing for it, and the Event is not repeated.
    world.pod('client-2', 'node-2', { app: 'db-client' });
    await eventually('annotation', () => world!.annotation('client-2'));
    await new Promise((r) => setTimeout(r, 300));
    expect(world.annotation('late-1')).toBeUndefined();
    expect(world.branches()).toHaveLength(2);
    expect(world.branches().map((b) => b.podUid)).not.toContain(
      (world.kube.objects.get('v1', 'pods', 'late-1', 'default') as { metadata: { uid: string } }).metadata
        .uid,
    );
    expect(podEvents(world, 'late-1').filter((e) => e.reason === 'BranchENINotRequested')).toHaveLength(1);
  });

  it("a pod that requests vpc.amazonaws.com/pod-eni but that no policy selects (deleted after admission) gets a branch ENI with the instance's groups and one SecurityGroupRequested Warning", async () => {
    world = await startWorld();
    world.policy();
    const lines: Record<string, unknown>[] = [];
    await world.controller({ log: jsonLogger((l) => lines.push(JSON.parse(l) as Record<string, unknown>)) });
    // Admitted while the policy selected it (the webhook gave it the resource); the policy is gone since.
    world.kube.objects.delete(
      'vpcresources.k8s.aws/v1beta1',
      'securitygrouppolicies',
      'db-client',
      'default',
    );
    await new Promise((r) => setTimeout(r, 300));
    const { uid } = world.pod('orphan-1', 'node-1', { app: 'db-client' });
    const branch = parsePodEniAnnotation(
      await eventually('annotation', () => world!.annotation('orphan-1')),
      { family: 4 },
    );
    const eni = world.ec2.state.eni(branch.eniId)!;
    expect(eni.groups).toEqual([NODE_SG]);
    expect(eni.subnetId).toBe(SUBNET);
    expect(eni.tags.get('vpcresources.k8s.aws/pod-uid')).toBe(uid);
    const ev = await eventually('the warning', () =>
      podEvents(world!, 'orphan-1').find((e) => e.reason === 'SecurityGroupRequested'),
    );
    expect(ev.type).toBe('Warning');
    expect(ev.message).toBe(
      `no SecurityGroupPolicy selects this pod: its branch ENI gets the instance's security groups (${NODE_SG}) ` +
        '(hint: a policy that selected it at admission was deleted or changed; to get other groups, make a ' +
        'policy select it and recreate the pod)',
    );
    await eventually('ResourceAllocated', () =>
      podEvents(world!, 'orphan-1').some((e) => e.reason === 'ResourceAllocated'),
    );
    expect(lines.filter((l) => String(l['msg']).startsWith('no SecurityGroupPolicy selects'))).toEqual([
      expect.objectContaining({ level: 'warn', pod: 'default/orphan-1', groups: NODE_SG }),
    ]);
    // A policy selecting it now changes nothing on its branch; passes go on without repeating the Event.
    world.policy();
    world.pod('client-1', 'node-1', { app: 'db-client' });
    await eventually('client-1', () => world!.annotation('client-1'));
    await new Promise((r) => setTimeout(r, 300));
    expect(world.ec2.state.eni(branch.eniId)?.groups).toEqual([NODE_SG]);
    expect(podEvents(world, 'orphan-1').filter((e) => e.reason === 'SecurityGroupRequested')).toHaveLength(1);
    expect(podEvents(world, 'client-1').filter((e) => e.reason === 'SecurityGroupRequested')).toEqual([]);
  });

  it('a pod whose ServiceAccount is not known yet waits, instead of getting the instance groups, for a policy that selects it by the ServiceAccount labels', async () => {
    world = await startWorld();
    world.policy({
      metadata: { name: 'readers', namespace: 'default' },
      spec: {
        serviceAccountSelector: { matchLabels: { team: 'readers' } },
        securityGroups: { groupIds: [DB_CLIENT_SG] },
      },
    });
    await world.controller();
    world.pod('reader-1', 'node-1', {}, { serviceAccountName: 'reader' });
    world.pod('client-1', 'node-1', { app: 'db-client' });
    await eventually('client-1 (instance groups)', () => world!.annotation('client-1'));
    await new Promise((r) => setTimeout(r, 400));
    expect(world.annotation('reader-1')).toBeUndefined();
    world.kube.objects.create('v1', 'serviceaccounts', {
      metadata: { name: 'reader', namespace: 'default', labels: { team: 'readers' } },
    } as never);
    const branch = parsePodEniAnnotation(await eventually('reader-1', () => world!.annotation('reader-1')), {
      family: 4,
    });
    expect(world.ec2.state.eni(branch.eniId)?.groups).toEqual([DB_CLIENT_SG]);
    expect(podEvents(world, 'reader-1').filter((e) => e.reason === 'SecurityGroupRequested')).toEqual([]);
  });

  it('deleting the pod deletes its branch ENI after the cooldown, not before', async () => {
    world = await startWorld();
    world.policy();
    await world.controller({ cooldownMs: 1500 });
    world.pod('client-1', 'node-1', { app: 'db-client' });
    await eventually('annotation', () => world!.annotation('client-1'));
    expect(world.branches()).toHaveLength(1);
    const deletedAt = Date.now();
    world.kube.objects.delete('v1', 'pods', 'client-1', 'default');
    await eventually('branch ENI gone', () => world!.branches().length === 0, 10_000);
    expect(Date.now() - deletedAt).toBeGreaterThanOrEqual(1500);
    expect(world.ec2.state.trunkAssociations()).toEqual([]);
  });

  it('at the trunk branch limit the next pod gets a BRANCH_LIMIT_REACHED Warning event and no ENI', async () => {
    world = await startWorld([
      { name: 'node-1', instanceId: 'i-0a000000000000001', instanceType: 'm5.large', sgp: true },
    ]);
    world.policy();
    await world.controller({ cooldownMs: 60_000 });
    for (let i = 0; i < 9; i++) world.pod(`client-${i}`, 'node-1', { app: 'db-client' });
    await eventually('nine annotated', () =>
      Array.from({ length: 9 }, (_, i) => world!.annotation(`client-${i}`)).every(Boolean),
    );
    world.pod('client-9', 'node-1', { app: 'db-client' });
    const ev = await eventually('limit event', () =>
      podEvents(world!, 'client-9').find((e) => e.reason === 'BranchAllocationFailed'),
    );
    expect(ev.type).toBe('Warning');
    expect(ev.message).toMatch(/^BRANCH_LIMIT_REACHED: node node-1: 9 of 9 branches/);
    expect(world.annotation('client-9')).toBeUndefined();
    expect(world.branches()).toHaveLength(9);
  });

  it('a node that cannot trunk gets no trunk and its pods an INSTANCE_NOT_TRUNKABLE event', async () => {
    world = await startWorld([
      { name: 'small', instanceId: 'i-0a000000000000003', instanceType: 't3.small', sgp: true },
    ]);
    world.policy();
    await world.controller();
    world.pod('client-1', 'small', { app: 'db-client' });
    const ev = await eventually('event', () =>
      podEvents(world!, 'client-1').find((e) => e.reason === 'BranchAllocationFailed'),
    );
    expect(ev.message).toMatch(/^INSTANCE_NOT_TRUNKABLE/);
    expect(world.ec2.state.enis().filter((e) => e.interfaceType === 'trunk')).toEqual([]);
  });

  it('keeps serving after the API server drops its watches, forgets their history and is away for a while', async () => {
    world = await startWorld();
    world.policy();
    await world.controller();
    world.pod('client-1', 'node-1', { app: 'db-client' });
    await eventually('client-1', () => world!.annotation('client-1'));
    world.kube.faults.dropWatches();
    world.kube.faults.expireHistory();
    world.pod('client-2', 'node-2', { app: 'db-client' });
    await eventually('client-2 after a re-list', () => world!.annotation('client-2'), 15_000);
    // Away: writes fail (503); the branch made meanwhile is annotated once the server is back.
    world.kube.faults.setUnavailable(true);
    world.kube.objects.create('v1', 'pods', {
      metadata: { name: 'client-3', namespace: 'default', labels: { app: 'db-client' } },
      spec: {
        nodeName: 'node-1',
        containers: [
          {
            name: 'c',
            image: 'busybox',
            resources: { limits: { [POD_ENI_RESOURCE]: '1' }, requests: { [POD_ENI_RESOURCE]: '1' } },
          },
        ],
      },
    } as never);
    await new Promise((r) => setTimeout(r, 1500));
    world.kube.faults.setUnavailable(false);
    await eventually('client-3 once the server is back', () => world!.annotation('client-3'), 15_000);
    expect(world.branches()).toHaveLength(3);
  });

  it('backs off a pod whose create EC2 refuses (one Warning event, a few calls, not one per pass), then serves it', async () => {
    world = await startWorld();
    world.policy();
    await world.controller();
    await eventually(
      'trunks',
      () => world!.ec2.state.enis().filter((e) => e.interfaceType === 'trunk' && e.attachment).length === 2,
    );
    world.ec2.faults.deny('ec2:CreateNetworkInterface');
    world.pod('client-1', 'node-1', { app: 'db-client' });
    const ev = await eventually('event', () =>
      podEvents(world!, 'client-1').find((e) => e.reason === 'BranchAllocationFailed'),
    );
    expect(ev.message).toMatch(/^CLOUD: /);
    await new Promise((r) => setTimeout(r, 2500));
    // Passes ran every 100 ms; the pod was tried at about 0, 1 and 3 s.
    const denied = world.ec2.calls.filter(
      (c) => c.action === 'CreateNetworkInterface' && c.errorCode === 'UnauthorizedOperation',
    );
    expect(denied.length).toBeGreaterThanOrEqual(2);
    expect(denied.length).toBeLessThanOrEqual(4);
    expect(podEvents(world, 'client-1').filter((e) => e.reason === 'BranchAllocationFailed')).toHaveLength(1);
    world.ec2.faults.clear();
    await eventually('served after the fault', () => world!.annotation('client-1'), 10_000);
  });

  it('stop() ends every watch it opened and leaves no connection to the API server', async () => {
    world = await startWorld();
    const kube = world.kube;
    const open = () => ({ watches: kube.openWatches, connections: kube.openConnections });
    expect(open()).toEqual({ watches: 0, connections: 0 });
    world.policy();
    const c = await world.controller();
    world.pod('client-1', 'node-1', { app: 'db-client' });
    await eventually('client-1', () => world!.annotation('client-1'));
    // One watch per kind it keeps: SecurityGroupPolicies, pods, nodes, ServiceAccounts, CNINodes, and the
    // amazon-vpc-cni ConfigMap by name.
    await eventually('its six watches', () => kube.openWatches >= 6);
    await c.stop();
    // The server sees the sockets close a moment later; the assertion below says what is left, if anything.
    await eventually(
      'no watch or connection left',
      () => kube.openWatches + kube.openConnections === 0,
      5000,
    ).catch(() => undefined);
    expect(open()).toEqual({ watches: 0, connections: 0 });
  });

  it('acts on nothing until every watched kind has listed: a pod list it may not read never costs a branch in use', async () => {
    world = await startWorld();
    world.policy();
    const first = await world.controller();
    world.pod('client-1', 'node-1', { app: 'db-client' });
    await eventually('client-1', () => world!.annotation('client-1'));
    await first.stop();
    // A second controller whose ServiceAccount may read everything but pods.
    const k = world.kube.objects;
    k.create('v1', 'serviceaccounts', { metadata: { name: 'no-pods', namespace: 'kube-system' } } as never);
    k.create('rbac.authorization.k8s.io/v1', 'clusterroles', {
      metadata: { name: 'no-pods' },
      rules: [
        { apiGroups: [''], resources: ['nodes', 'serviceaccounts'], verbs: ['list', 'watch'] },
        {
          apiGroups: ['vpcresources.k8s.aws'],
          resources: ['cninodes', 'securitygrouppolicies'],
          verbs: ['list', 'watch'],
        },
      ],
    } as never);
    k.create('rbac.authorization.k8s.io/v1', 'clusterrolebindings', {
      metadata: { name: 'no-pods' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'no-pods' },
      subjects: [{ kind: 'ServiceAccount', name: 'no-pods', namespace: 'kube-system' }],
    } as never);
    const kubeconfig = join(world.scratchPath, 'no-pods.kubeconfig');
    writeFileSync(
      kubeconfig,
      world.kube.kubeconfig({ token: world.kube.mintServiceAccountToken('kube-system', 'no-pods') }),
    );
    const second = await world.controller({ cooldownMs: 100, kubeconfig });
    await eventually('the pod list refused', () =>
      world!.kube.requests.some((r) => r.status === 403 && r.url.startsWith('/api/v1/pods')),
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect(world.branches()).toHaveLength(1);
    expect(world.ec2.state.trunkAssociations()).toHaveLength(1);
    expect(second.ledger()?.cooling.size).toBe(0);
  });

  it('a trunk attach whose answer is lost, a refused attach and a refused create still end with exactly one attached trunk per node and no other', async () => {
    world = await startWorld();
    world.ec2.faults.failNext('AttachNetworkInterface', 'InternalError', { afterApply: true });
    world.ec2.faults.failNext('AttachNetworkInterface', 'AttachmentLimitExceeded');
    world.ec2.faults.failNext('CreateNetworkInterface', 'UnauthorizedOperation');
    await world.controller();
    await eventually(
      'trunks',
      () => world!.ec2.state.enis().filter((e) => e.interfaceType === 'trunk' && e.attachment).length === 2,
    );
    // Give a wrong retry time to make another trunk; there is none, attached or not.
    await new Promise((r) => setTimeout(r, 500));
    const trunks = world.ec2.state.enis().filter((e) => e.interfaceType === 'trunk');
    expect(trunks.map((t) => t.attachment?.instanceId).sort()).toEqual([
      'i-0a000000000000001',
      'i-0a000000000000002',
    ]);
    expect(
      world.ec2.calls
        .filter((c) => c.errorCode !== undefined)
        .map((c) => c.action)
        .sort(),
    ).toEqual(['AttachNetworkInterface', 'AttachNetworkInterface', 'CreateNetworkInterface']);
  });

  it('EC2 faults mid-create (lost answers, refusals) leak nothing and every pod is served once they stop', async () => {
    world = await startWorld();
    world.policy();
    const c = await world.controller({ cooldownMs: 200 });
    await eventually(
      'trunks',
      () => world!.ec2.state.enis().filter((e) => e.interfaceType === 'trunk' && e.attachment).length === 2,
    );
    world.ec2.faults.failNext('CreateNetworkInterface', 'InternalError', { afterApply: true, count: 2 });
    world.ec2.faults.failNext('AssociateTrunkInterface', 'InternalError', { afterApply: true, count: 2 });
    world.ec2.faults.failNext('DisassociateTrunkInterface', 'UnauthorizedOperation', { count: 1 });
    for (let i = 0; i < 6; i++) world.pod(`client-${i}`, i % 2 ? 'node-1' : 'node-2', { app: 'db-client' });
    await eventually(
      'six annotated',
      () => Array.from({ length: 6 }, (_, i) => world!.annotation(`client-${i}`)).every(Boolean),
      15_000,
    );
    // Every branch in EC2 belongs to exactly one annotated pod (orphans of lost answers are swept after the cooldown).
    for (let i = 0; i < 6; i++) world.kube.objects.delete('v1', 'pods', `client-${i}`, 'default');
    await eventually(
      'nothing left',
      () => world!.branches().length === 0 && c.ledger()?.cooling.size === 0,
      15_000,
    );
    expect(world.ec2.state.trunkAssociations()).toEqual([]);
    // The faults did happen.
    const failed = (action: string) =>
      world!.ec2.calls.filter((x) => x.action === action && x.errorCode !== undefined).length;
    expect(failed('CreateNetworkInterface')).toBe(2);
    expect(failed('AssociateTrunkInterface')).toBe(2);
    expect(failed('DisassociateTrunkInterface')).toBe(1);
  });
});
