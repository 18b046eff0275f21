/**
 * What the controller does with objects from the API server it cannot use: a SecurityGroupPolicy whose selector
 * the API server's own `LabelSelectorAsSelector` would refuse, or whose spec has the wrong shape (a cluster whose
 * CRD carries no schema), and an ENIConfig naming no subnet or group it could create an ENI with. Each is refused
 * alone, with one warning line, and the good objects beside it keep being served — by the controller's passes
 * and by the webhook's policy lookup alike. Everything goes through kube-simulator and @kubernetes/client-node.
 */
import { eventually } from '@vpc-cni-kit/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { jsonLogger } from '../src/index.js';
import { kubeApis } from '../src/kube/apis.js';
import { EniConfigError, readEniConfig } from '../src/kube/eni-config.js';
import { apiPolicyLookup } from '../src/webhook/policy-lookup.js';
import { DB_CLIENT_SG, dbClientPolicy, POD_NET_SG, startWorld, type World } from './support/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const SGP_CRD = 'securitygrouppolicies.vpcresources.k8s.aws';

/** A policy in `default` giving `sg-0c…3` to the pods its podSelector selects. */
function policy(name: string, podSelector: unknown): Record<string, unknown> {
  return {
    metadata: { name, namespace: 'default' },
    spec: { podSelector, securityGroups: { groupIds: [POD_NET_SG] } },
  };
}

/** The Events of a pod in `default` with this reason. */
function podEvents(w: World, pod: string, reason: string): { message?: string }[] {
  return (
    w.kube.objects.list('v1', 'events', 'default') as {
      involvedObject?: { name?: string };
      reason?: string;
      message?: string;
    }[]
  ).filter((e) => e.involvedObject?.name === pod && e.reason === reason);
}

/** Replaces the SecurityGroupPolicy CRD by one without a schema, as a hand-made or older CRD may be. */
function schemalessPolicies(w: World): void {
  const crd = w.kube.objects.get('apiextensions.k8s.io/v1', 'customresourcedefinitions', SGP_CRD) as {
    spec: { versions: { schema?: unknown }[] };
  };
  w.kube.objects.delete('apiextensions.k8s.io/v1', 'customresourcedefinitions', SGP_CRD);
  const versions = crd.spec.versions.map((v) => ({
    ...v,
    schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
  }));
  w.kube.objects.create('apiextensions.k8s.io/v1', 'customresourcedefinitions', {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: SGP_CRD },
    spec: { ...(crd.spec as object), versions },
  } as never);
}

describe('SecurityGroupPolicies the API server accepts but no selector can be made of', () => {
  it('a selector with a key or value outside label syntax selects nothing (not every pod without the key); the good policy is still served', async () => {
    world = await startWorld();
    // Valid for the CRD schema (strings where strings go), refused by LabelSelectorAsSelector: the reference skips
    // such a policy. Matched naively, DoesNotExist/NotIn on a key no pod can carry would select every pod.
    world.policy(policy('bad-key', { matchExpressions: [{ key: 'tier is', operator: 'DoesNotExist' }] }));
    world.policy(
      policy('bad-value', { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['no such'] }] }),
    );
    world.policy(dbClientPolicy());

    const lookup = apiPolicyLookup(kubeApis(world.kubeconfigPath));
    const groupsOf = (labels: Record<string, string>) =>
      lookup({ namespace: 'default', labels, serviceAccountName: 'default' });
    expect(await groupsOf({ app: 'web' })).toEqual([]);
    expect(await groupsOf({ app: 'db-client' })).toEqual([DB_CLIENT_SG]);

    const lines: string[] = [];
    await world.controller({ log: jsonLogger((l) => lines.push(l)) });
    // Admitted without the resource (no valid policy selected it): a policy that selects it is named in a
    // BranchENINotRequested Event, so that Event shows what the passes make of the policies.
    world.pod('web-1', 'node-1', { app: 'web' }, { requestsPodEni: false });
    world.pod('client-1', 'node-1', { app: 'db-client' });
    await eventually('the db-client pod annotated', () => world!.annotation('client-1'));
    const branches = world.branches();
    expect(branches.map((b) => b.groups)).toEqual([[DB_CLIENT_SG]]);
    const notRequested = () => podEvents(world!, 'web-1', 'BranchENINotRequested')[0];
    // A few passes (every 100 ms) and their Events.
    await new Promise((r) => setTimeout(r, 400));
    expect(notRequested()).toBeUndefined();
    const refused = lines
      .map((l) => JSON.parse(l) as { level: string; msg: string; policy?: string; problem?: string })
      .filter((l) => l.msg.startsWith('SecurityGroupPolicy refused'));
    expect(refused.map((l) => [l.level, l.policy]).sort()).toEqual([
      ['warn', 'default/bad-key'],
      ['warn', 'default/bad-value'],
    ]);
    expect(refused.find((l) => l.policy === 'default/bad-key')?.problem).toContain(
      'key "tier is" is not a label key',
    );
    // Fixed in place, the policy is served on the change; deleted and made again just as wrong, warned again.
    world.kube.objects.patch(
      'vpcresources.k8s.aws/v1beta1',
      'securitygrouppolicies',
      'bad-value',
      {
        spec: {
          podSelector: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['db-client'] }] },
        },
      },
      'default',
    );
    const served = await eventually('the web pod selected by the fixed policy', () => notRequested());
    expect(served.message).toContain(POD_NET_SG);
    world.kube.objects.delete('vpcresources.k8s.aws/v1beta1', 'securitygrouppolicies', 'bad-key', 'default');
    const warnings = () =>
      lines.filter((l) => l.includes('SecurityGroupPolicy refused') && l.includes('default/bad-key')).length;
    // Passes run every 100 ms: give the watch time to deliver the deletion and a pass to see it gone (generous,
    // for a loaded machine) before it comes back.
    await new Promise((r) => setTimeout(r, 1500));
    world.policy(policy('bad-key', { matchExpressions: [{ key: 'tier is', operator: 'DoesNotExist' }] }));
    await eventually('warned again', () => warnings() === 2);
  });

  it('a spec of the wrong shape (a CRD without a schema) is refused alone: no TypeError, the pass and the webhook go on', async () => {
    world = await startWorld();
    schemalessPolicies(world);
    world.policy(policy('not-a-list', { matchExpressions: { key: 'app', operator: 'In', values: ['web'] } }));
    world.policy(
      policy('string-values', { matchExpressions: [{ key: 'app', operator: 'In', values: 'web' }] }),
    );
    world.policy(policy('labels-list', { matchLabels: ['app=web'] }));
    world.policy(dbClientPolicy());

    const lookup = apiPolicyLookup(kubeApis(world.kubeconfigPath));
    expect(
      await lookup({ namespace: 'default', labels: { app: 'we' }, serviceAccountName: 'default' }),
    ).toEqual([]);
    expect(
      await lookup({ namespace: 'default', labels: { app: 'db-client' }, serviceAccountName: 'default' }),
    ).toEqual([DB_CLIENT_SG]);

    const lines: string[] = [];
    await world.controller({ log: jsonLogger((l) => lines.push(l)) });
    world.pod('client-1', 'node-1', { app: 'db-client' });
    world.pod('web-1', 'node-1', { app: 'we' }, { requestsPodEni: false });
    await eventually('the db-client pod annotated', () => world!.annotation('client-1'));
    expect(world.branches().map((b) => b.groups)).toEqual([[DB_CLIENT_SG]]);
    expect(world.annotation('web-1')).toBeUndefined();
    const msgs = lines.map((l) => JSON.parse(l) as { msg: string; policy?: string });
    expect(msgs.filter((l) => l.msg === 'reconcile pass failed')).toEqual([]);
    expect(
      msgs
        .filter((l) => l.msg.startsWith('SecurityGroupPolicy refused'))
        .map((l) => l.policy)
        .sort(),
    ).toEqual(['default/labels-list', 'default/not-a-list', 'default/string-values']);
  });
});

describe('a SecurityGroupPolicy naming a group EC2 does not have', () => {
  it("still selects its pods, which wait with EC2's refusal in an Event instead of starting with the node's groups", async () => {
    world = await startWorld();
    world.policy({
      metadata: { name: 'typo', namespace: 'default' },
      spec: { podSelector: { matchLabels: { app: 'typo' } }, securityGroups: { groupIds: ['sg-typo'] } },
    });
    world.policy(dbClientPolicy());
    // The webhook's lookup gives the pod the resource: it is scheduled as a branch pod, not as an ordinary one.
    const lookup = apiPolicyLookup(kubeApis(world.kubeconfigPath));
    expect(
      await lookup({ namespace: 'default', labels: { app: 'typo' }, serviceAccountName: 'default' }),
    ).toEqual(['sg-typo']);
    await world.controller();
    world.pod('typo-1', 'node-1', { app: 'typo' });
    world.pod('client-1', 'node-1', { app: 'db-client' });
    await eventually('the db-client pod annotated', () => world!.annotation('client-1'));
    const ev = await eventually(
      'the refusal in an Event',
      () => podEvents(world!, 'typo-1', 'BranchAllocationFailed')[0],
    );
    expect(ev.message).toContain('sg-typo');
    expect(world.annotation('typo-1')).toBeUndefined();
    expect(world.branches().map((b) => b.groups)).toEqual([[DB_CLIENT_SG]]);
  });
});

describe('ENIConfig objects the controller cannot build a trunk or branch from', () => {
  it('a subnet or security group that is not an EC2 id, or more than 16 groups, is MALFORMED, naming the field', async () => {
    world = await startWorld();
    const api = kubeApis(world.kubeconfigPath);
    const eniConfig = (name: string, spec: Record<string, unknown>) =>
      world!.kube.objects.create('crd.k8s.amazonaws.com/v1alpha1', 'eniconfigs', {
        metadata: { name },
        spec,
      } as never);
    eniConfig('bad-subnet', { subnet: 'subnet-XYZ', securityGroups: [POD_NET_SG] });
    eniConfig('bad-group', { subnet: 'subnet-0c000000000000003', securityGroups: ['default'] });
    const groups = (n: number) =>
      Array.from({ length: n }, (_, i) => `sg-000000${i.toString(16).padStart(2, '0')}`);
    eniConfig('sixteen-groups', { subnet: 'subnet-0c000000000000003', securityGroups: groups(16) });
    eniConfig('seventeen-groups', { subnet: 'subnet-0c000000000000003', securityGroups: groups(17) });
    eniConfig('good', { subnet: 'subnet-0c000000000000003', securityGroups: [POD_NET_SG] });
    eniConfig('no-subnet', { subnet: '' });

    const problem = async (name: string) =>
      readEniConfig(api, name).then(
        () => 'read',
        (e: unknown) => (e instanceof EniConfigError ? `${e.code}: ${e.message}` : `not typed: ${String(e)}`),
      );
    expect(await problem('bad-subnet')).toMatch(
      /^MALFORMED: ENIConfig bad-subnet: spec\.subnet .*subnet-XYZ/,
    );
    expect(await problem('bad-group')).toMatch(/^MALFORMED: ENIConfig bad-group: spec\.securityGroups/);
    // EC2 holds an account to its quota (5 unless raised, up to 16) when the ENI is created.
    expect(await problem('sixteen-groups')).toBe('read');
    expect(await problem('seventeen-groups')).toMatch(
      /^MALFORMED: ENIConfig seventeen-groups: spec\.securityGroups lists 17 groups, more than EC2 allows on an ENI \(16\)$/,
    );
    expect(await readEniConfig(api, 'good')).toEqual({
      subnet: 'subnet-0c000000000000003',
      securityGroups: [POD_NET_SG],
    });
    // A CNINode's CustomNetworking value is free text: `..` used to read the group's discovery document as an
    // ENIConfig without a subnet (the trunk silently in the node subnet).
    for (const name of ['..', '.', 'Pod-Net', 'a/b'])
      expect(await problem(name)).toMatch(/^MALFORMED: .* is not an ENIConfig name/);
    // The reference's controller keeps the node's subnet when the ENIConfig names none.
    expect(await readEniConfig(api, 'no-subnet')).toEqual({ subnet: '', securityGroups: [] });
  });
});

describe('Nodes the controller cannot give a trunk', () => {
  it('a node whose CNINode asks for security groups for pods but whose providerID names no instance is one warning, not silence', async () => {
    world = await startWorld([
      { name: 'node-1', instanceId: 'i-0a000000000000001', instanceType: 'm5.large', sgp: true },
    ]);
    world.kube.objects.create('v1', 'nodes', {
      metadata: { name: 'odd-node' },
      spec: { providerID: 'kind://docker/odd-node' },
    } as never);
    world.kube.objects.create('vpcresources.k8s.aws/v1alpha1', 'cninodes', {
      metadata: { name: 'odd-node' },
      spec: { features: [{ name: 'SecurityGroupsForPods' }] },
    } as never);
    world.policy();
    const lines: string[] = [];
    await world.controller({ log: jsonLogger((l) => lines.push(l)), tickMs: 20 });
    world.pod('client-1', 'node-1', { app: 'db-client' });
    await eventually('node-1 still served', () => world!.annotation('client-1'));
    const warned = lines
      .map((l) => JSON.parse(l) as { msg: string; node?: string; providerID?: string; hint?: string })
      .filter((l) => l.msg.startsWith('node asks for security groups for pods but names no EC2 instance'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ node: 'odd-node', providerID: 'kind://docker/odd-node' });
    expect(warned[0]?.hint).toContain('aws:///');
  });
});
