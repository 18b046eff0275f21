/**
 * aws-node's Kubernetes side end to end: daemons on the virtual VPC talk to the cluster's kube-simulator over
 * https as the aws-node ServiceAccount, authorized by the project's own RBAC manifest.
 */
import { existsSync } from 'node:fs';
import { buildLibcniRunner, describePrivileged, eventually } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { awsNodeBinDir } from '../src/bin-dir.js';
import { Cluster, type ClusterPod } from '../src/cluster.js';
import { eventually as eventuallyTrue } from './support/scenario.js';

const binDir = awsNodeBinDir();

describePrivileged('aws-node and the Kubernetes API', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    if (!existsSync(`${binDir}/aws-node.cjs`))
      throw new Error(`build first: ${binDir}/aws-node.cjs is missing (npm run build)`);
    cluster = await Cluster.start({
      nodes: 1,
      binDir,
      libcniRunner: await buildLibcniRunner(),
      simulator: { rateLimits: false },
      env: { ANNOTATE_POD_IP: 'true' },
    });
  }, 180_000);

  afterAll(async () => {
    await cluster?.close();
  }, 120_000);

  it('creates its CNINode, named after its Node, through RBAC', async () => {
    const node = cluster.nodes[0]!;
    const cniNode = await eventually('the CNINode', () =>
      cluster.kube.sim.objects.get('vpcresources.k8s.aws/v1alpha1', 'cninodes', node.nodeName),
    );
    expect(cniNode.spec).toEqual({ features: [] });
    const nodeUid = cluster.kube.sim.objects.get('v1', 'nodes', node.nodeName)!.metadata!.uid;
    expect(cniNode.metadata!.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Node', name: node.nodeName, uid: nodeUid },
    ]);
    const forbidden = cluster.kube.sim.requests.filter((r) => r.status === 403);
    expect(forbidden).toEqual([]);
  });

  it('annotates pods with their IP after ADD (ANNOTATE_POD_IP)', async () => {
    const pod = await cluster.addPod(0, { name: 'annotated' });
    const annotation = await eventually('the pod-ips annotation', () => {
      const p = cluster.kube.sim.objects.get('v1', 'pods', 'annotated', 'default');
      return (p?.metadata?.annotations as Record<string, string> | undefined)?.['vpc.amazonaws.com/pod-ips'];
    });
    expect(annotation).toBe(pod.address);
    await cluster.delPod(pod);
  });

  it('keeps ADD and DEL working while the Kubernetes API is down, and catches up afterwards', async () => {
    await cluster.kube.sim.suspend();
    const pods: ClusterPod[] = [];
    try {
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 3; i++) {
          pods.push(await cluster.addPod(0, { name: `churn-${round}-${i}` }));
        }
        await cluster.delPod(pods.shift()!);
      }
      expect(pods.every((p) => /^10\.0\.\d+\.\d+$/.test(p.address))).toBe(true);
    } finally {
      await cluster.kube.sim.resume();
    }
    for (const p of pods)
      expect(
        await eventually(
          `annotation of ${p.name}`,
          () => {
            const obj = cluster.kube.sim.objects.get('v1', 'pods', p.name, p.namespace);
            return (obj?.metadata?.annotations as Record<string, string> | undefined)?.[
              'vpc.amazonaws.com/pod-ips'
            ];
          },
          60_000,
        ),
      ).toBe(p.address);
    expect(cluster.logTail(0, 200)).toContain('Kubernetes API unreachable; pod networking is unaffected');
    expect(cluster.logTail(0, 200)).toContain('Kubernetes API reachable again');
    for (const p of pods) await cluster.delPod(p);
  }, 120_000);

  it('emits a MissingIAMPermissions Warning Event when EC2 answers UnauthorizedOperation', async () => {
    const node = cluster.nodes[0]!;
    cluster.vpc.simulator.faults.deny('AssignPrivateIpAddresses', 'CreateNetworkInterface');
    try {
      // A restarted daemon asked for more warm addresses than it has pre-scales: its EC2 calls are refused.
      await cluster.stopDaemon(0);
      node.env = { ...node.env, WARM_IP_TARGET: '25' };
      await cluster.startDaemon(0);
      const event = await eventually(
        'the Event',
        () =>
          cluster.kube.sim.objects
            .list('events.k8s.io/v1', 'events', 'kube-system')
            .find((e) => e.reason === 'MissingIAMPermissions'),
        20_000,
      );
      expect(event).toMatchObject({
        type: 'Warning',
        action: expect.stringMatching(/^ec2:(AssignPrivateIpAddresses|CreateNetworkInterface)$/),
        reportingController: 'aws-node',
        reportingInstance: node.nodeName,
        regarding: { kind: 'Pod', namespace: 'kube-system', name: node.awsNodePod },
      });
      expect(String(event.note)).toBe(
        `Unauthorized operation: failed to call ${String(event.action)} due to missing permissions. Please refer https://github.com/aws/amazon-vpc-cni-k8s/blob/master/docs/iam-policy.md to attach relevant policy to IAM role`,
      );
      // The refused pool action is among the daemon's recent failures, and counted as an AWS utils error.
      await eventuallyTrue(
        'the refused pool action in /v1/failures',
        async () =>
          ((await cluster.introspect(0, '/v1/failures')) as Record<string, unknown>[]).some(
            (f) => f['source'] === 'pool' && f['code'] === 'UnauthorizedOperation' && f['reason'] !== '',
          ),
        10_000,
        100,
      );
      expect(await cluster.metrics(0)).toMatch(
        /^awscni_aws_utils_error_count\{fn="increaseDatastorePool",error="UnauthorizedOperation"\} [1-9]/m,
      );
    } finally {
      cluster.vpc.simulator.faults.clear();
    }
  });
});
