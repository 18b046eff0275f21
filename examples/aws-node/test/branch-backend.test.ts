/**
 * Security groups for pods in the daemon's backend: a pod with a branch ENI gets the branch's address and the
 * reference's branch fields, the pool is never touched; every cause fails the pod with its own code, counts in
 * awscni_pod_eni_error_count and becomes a pod Event. The kernel side is in the cluster harness's e2e suite.
 */
import { Datastore } from '@vpc-cni-kit/datastore';
import { InMemoryGroupCommitCheckpointer, ManualClock } from '@vpc-cni-kit/datastore/testing';
import { branchHostVethName, hostVethName } from '@vpc-cni-kit/routing-table';
import {
  type BranchNetworkPlan,
  type BranchTeardownPlan,
  formatPodEniAnnotation,
  POD_ENI_ANNOTATION,
  POD_ENI_RESOURCE,
  SgpError,
} from '@vpc-cni-kit/sgp-branch';
import { describe, expect, it } from 'vitest';
import { type BranchPlumber, BranchPods, type PodView, type TrunkEni } from '../src/daemon/branch-pods.js';
import type { PodPlumber } from '../src/daemon/ipam-backend.js';
import { BRANCH_FAILURES, type BranchCause } from '../src/rpc/branch-failures.js';
import { RpcStatusError } from '../src/rpc/grpc-server.js';
import { addRequest, delRequest, testBackend } from './support/backend.js';
import { recordingLogger } from './support/logger.js';

const TRUNK: TrunkEni = { eniId: 'eni-trunk', mac: '0a:00:00:00:00:aa' };
const BRANCH = {
  eniId: 'eni-0b5',
  mac: '0a:00:00:00:00:b5',
  ipv4: '10.0.7.9',
  subnetCidr: '10.0.0.0/19',
  vlanId: 5,
};

const unusedPlumber: PodPlumber = {
  setup: async () => {
    throw new Error('an ordinary pod was plumbed');
  },
  teardown: async () => {},
  hostVethName: (prefix, ns, name) => hostVethName(prefix, ns, name),
};

class RecordingBranchPlumber implements BranchPlumber {
  readonly setups: BranchNetworkPlan[] = [];
  readonly teardowns: BranchTeardownPlan[] = [];
  async setup(plan: BranchNetworkPlan) {
    this.setups.push(plan);
    return { hostMac: '02:00:00:00:00:07' };
  }
  async teardown(plan: BranchTeardownPlan) {
    this.teardowns.push(plan);
  }
}

function setup(
  options: {
    pods?: Record<string, PodView | 'unreachable'>;
    trunk?: TrunkEni | undefined;
    links?: { name: string; index: number; mac: string }[];
    mode?: 'strict' | 'standard';
    version?: string;
  } = {},
) {
  const datastore = new Datastore({
    clock: new ManualClock(),
    checkpointer: new InMemoryGroupCommitCheckpointer(),
    cooldownMs: 0,
  });
  datastore.addEni({ id: 'eni-0', deviceNumber: 0, routeTableId: 254, subnetId: 's', isPrimary: true });
  datastore.addCidr('eni-0', '10.0.1.10/32');
  const plumber = new RecordingBranchPlumber();
  const log = recordingLogger();
  const pods = options.pods ?? {};
  const branchPods = new BranchPods({
    mode: options.mode ?? 'strict',
    linkKind: 'macvlan',
    readPod: async (namespace, name) => {
      const pod = pods[`${namespace}/${name}`];
      if (pod === undefined || pod === 'unreachable')
        throw new SgpError({ code: 'POD_NOT_FOUND', op: 'readPod', detail: `${namespace}/${name}` });
      return pod;
    },
    trunk: async () => ('trunk' in options ? options.trunk : TRUNK),
    hostLinks: async () =>
      options.links ?? [
        { name: 'eth0', index: 2, mac: '0a:00:00:00:00:01' },
        { name: 'eth1', index: 7, mac: TRUNK.mac },
      ],
    plumber,
    now: () => 0,
    log,
  });
  const events: { cause: BranchCause; pod: string }[] = [];
  const podEniErrors: string[] = [];
  const outcomes: [string, boolean][] = [];
  const backend = testBackend(datastore, unusedPlumber, {
    branchPods,
    version: options.version ?? '',
    onBranchFailure: (f) => events.push({ cause: f.cause, pod: `${f.pod.namespace}/${f.pod.name}` }),
    observer: {
      addNetwork: (_ms, outcome, branch) => outcomes.push([outcome, branch ?? false]),
      delNetwork: () => {},
      noAvailableAddress: () => {},
      podEniError: (fn) => podEniErrors.push(fn),
    },
  });
  return { datastore, backend, plumber, branchPods, events, podEniErrors, outcomes, log };
}

const branchPod = (annotation?: string): PodView => ({
  annotations: annotation === undefined ? {} : { [POD_ENI_ANNOTATION]: annotation },
  containerLimits: [{ [POD_ENI_RESOURCE]: '1', cpu: '1' }],
});
const ordinaryPod: PodView = { annotations: {}, containerLimits: [{ cpu: '1' }] };

describe('security groups for pods in the backend', () => {
  it('answers a branch pod with the branch address and the reference fields, and never touches the pool', async () => {
    const t = setup({ pods: { 'default/p1': branchPod(formatPodEniAnnotation(BRANCH)) } });
    const reply = await t.backend.addNetwork(addRequest(1));
    expect(reply).toMatchObject({
      Success: true,
      IPAllocationMetadata: [{ IPv4Addr: '10.0.7.9', IPv6Addr: '', DeviceNumber: -1, RouteTableId: 0 }],
      PodVlanId: 5,
      PodENIMAC: '0a:00:00:00:00:b5',
      PodENISubnetGW: '10.0.0.1',
      ParentIfIndex: 7,
      PodPlumbed: true,
      HostVethName: branchHostVethName('strict', 'eni', 'default', 'p1'),
      HostVethMac: '02:00:00:00:00:07',
    });
    expect(t.datastore.stats().assignedIPs).toBe(0);
    expect(t.outcomes).toEqual([['success', true]]);
    const plan = t.plumber.setups[0]!;
    expect(plan.link).toMatchObject({ kind: 'macvlan', name: 'vlan.eth.5', parent: 'eth1', mac: BRANCH.mac });
    expect(plan.table).toBe(105);
    expect(t.branchPods.list()).toMatchObject([
      { namespace: 'default', name: 'p1', vlanId: 5, branchEniId: 'eni-0b5', trunkEniId: 'eni-trunk' },
    ]);

    const del = await t.backend.delNetwork(delRequest(1));
    expect(del).toMatchObject({
      Success: true,
      PodVlanId: 5,
      IPAllocationMetadata: [{ IPv4Addr: '10.0.7.9' }],
    });
    expect(t.plumber.teardowns).toMatchObject([{ link: { name: 'vlan.eth.5' }, table: 105 }]);
    expect(t.branchPods.list()).toEqual([]);
    // A second DEL is an unknown pod: success, nothing torn down twice.
    const again = await t.backend.delNetwork(delRequest(1));
    expect(again.Success).toBe(true);
    expect(again.PodVlanId ?? 0).toBe(0);
    expect(t.plumber.teardowns).toHaveLength(1);
  });

  it('standard mode names the host veth with the configured prefix', async () => {
    const t = setup({ mode: 'standard', pods: { 'default/p1': branchPod(formatPodEniAnnotation(BRANCH)) } });
    const reply = await t.backend.addNetwork(addRequest(1));
    expect(reply.HostVethName).toBe(hostVethName('eni', 'default', 'p1'));
    expect(t.plumber.setups[0]!.routing.rules.map((r) => r.priority)).toEqual([512, 1536]);
  });

  it('ignores a multi-NIC request for a branch pod (the reference) and refuses it for an ordinary one', async () => {
    const t = setup({
      pods: { 'default/p1': branchPod(formatPodEniAnnotation(BRANCH)), 'default/p2': ordinaryPod },
    });
    expect(await t.backend.addNetwork({ ...addRequest(1), RequiresMultiNICAttachment: true })).toMatchObject({
      Success: true,
      PodVlanId: 5,
    });
    expect(await t.backend.addNetwork({ ...addRequest(2), RequiresMultiNICAttachment: true })).toMatchObject({
      Success: false,
      FailureCode: 'InvalidRequest',
    });
    expect(t.datastore.stats().assignedIPs).toBe(0);
  });

  it('gives a pod without a branch an ordinary pool address', async () => {
    const t = setup({ pods: { 'default/p1': ordinaryPod } });
    const reply = await t.backend.addNetwork({ ...addRequest(1), PodPlumbing: false });
    expect(reply.Success).toBe(true);
    expect(reply.PodVlanId ?? 0).toBe(0);
    expect(reply.IPAllocationMetadata?.[0]?.IPv4Addr).toBe('10.0.1.10');
    expect(t.outcomes).toEqual([['success', false]]);
  });

  it('gives a pool address to a pod whose annotation names a branch but whose first container does not ask for one', async () => {
    const annotation = formatPodEniAnnotation(BRANCH);
    const t = setup({
      pods: {
        // The annotation alone (anyone who can create a pod can write it).
        'default/p1': { annotations: { [POD_ENI_ANNOTATION]: annotation }, containerLimits: [{ cpu: '1' }] },
        // The resource in the second container only: the reference looks at the first.
        'default/p2': {
          annotations: { [POD_ENI_ANNOTATION]: annotation },
          containerLimits: [undefined, { [POD_ENI_RESOURCE]: '1' }],
        },
      },
    });
    t.datastore.addCidr('eni-0', '10.0.1.11/32');
    for (const n of [1, 2, 1]) {
      const reply = await t.backend.addNetwork({ ...addRequest(n), PodPlumbing: false });
      expect(reply.Success).toBe(true);
      expect(reply.PodVlanId ?? 0).toBe(0);
      expect(reply.IPAllocationMetadata?.[0]?.IPv4Addr).not.toBe(BRANCH.ipv4);
    }
    expect(t.branchPods.list()).toEqual([]);
    expect(t.plumber.setups).toEqual([]);
    expect(t.datastore.stats().assignedIPs).toBe(2);
    expect(t.outcomes.map(([, branch]) => branch)).toEqual([false, false, false]);
    // Logged once per pod, at warn level, naming the pod and why.
    const warned = t.log.lines.filter((l) => l.startsWith('warn ') && l.includes('annotation ignored'));
    expect(warned.map((l) => JSON.parse(l.slice(l.indexOf(' {') + 1)).pod)).toEqual([
      'default/p1',
      'default/p2',
    ]);
    expect(warned[0]).toContain(`first container's limits do not ask for ${POD_ENI_RESOURCE}`);
  });

  const causes: [string, Parameters<typeof setup>[0], BranchCause][] = [
    ['the pod is unknown to the API', { pods: {} }, 'POD_NOT_FOUND'],
    ['the annotation is missing', { pods: { 'default/p1': branchPod() } }, 'ANNOTATION_MISSING'],
    [
      'the annotation does not parse',
      { pods: { 'default/p1': branchPod('[{"eniId":') } },
      'ANNOTATION_INVALID',
    ],
    [
      'the node has no trunk',
      { trunk: undefined, pods: { 'default/p1': branchPod(formatPodEniAnnotation(BRANCH)) } },
      'NO_TRUNK',
    ],
    [
      "no link carries the trunk's MAC",
      {
        links: [{ name: 'eth0', index: 2, mac: '0a:00:00:00:00:01' }],
        pods: { 'default/p1': branchPod(formatPodEniAnnotation(BRANCH)) },
      },
      'TRUNK_LINK_NOT_FOUND',
    ],
  ];
  for (const [what, options, cause] of causes) {
    it(`fails with ${cause} when ${what}, counts it and reports it on the pod`, async () => {
      const t = setup(options);
      const reply = await t.backend.addNetwork(addRequest(1));
      expect(reply).toMatchObject({ Success: false, FailureCode: BRANCH_FAILURES[cause].failure });
      expect(reply.FailureMessage).toContain(cause);
      expect(t.events).toEqual([{ cause, pod: 'default/p1' }]);
      expect(t.podEniErrors).toEqual([`AddNetwork.${cause}`]);
      expect(t.datastore.stats().assignedIPs).toBe(0);
      expect(t.plumber.setups).toEqual([]);
    });
  }

  it('refuses a plugin of another version (FAILED_PRECONDITION) and reports it on the pod', async () => {
    const t = setup({ version: 'v1.2.3', pods: { 'default/p1': branchPod(formatPodEniAnnotation(BRANCH)) } });
    const refused = await t.backend.addNetwork({ ...addRequest(1), ClientVersion: 'v1.2.2' }).catch((e) => e);
    expect(refused).toBeInstanceOf(RpcStatusError);
    expect((refused as RpcStatusError).grpcStatus).toBe(9);
    expect(t.events).toEqual([{ cause: 'VERSION_MISMATCH', pod: 'default/p1' }]);
    expect(t.podEniErrors).toEqual(['validateVersion']);
  });

  it('gives every cause its own CNI code, reply code and Event reason', () => {
    const rows = Object.values(BRANCH_FAILURES);
    for (const field of ['cniCode', 'failure', 'eventReason'] as const)
      expect(new Set(rows.map((r) => r[field])).size).toBe(rows.length);
    for (const r of rows) expect(r.cniCode).toBeGreaterThanOrEqual(100);
  });
});
