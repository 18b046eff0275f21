import { formatTable } from '@vpc-cni-kit/aws-node';
import { cidrContains, parseCidr, parseIp } from '@vpc-cni-kit/ip-address';
import type { Cluster, ClusterPod } from '../cluster.js';

interface EnisDoc {
  [card: string]: {
    TotalIPs: number;
    AssignedIPs: number;
    ENIs: Record<
      string,
      {
        ID: string;
        DeviceNumber: number;
        IsPrimary: boolean;
        AvailableIPv4Cidrs: Record<string, unknown>;
        IPv6Cidrs?: Record<string, unknown>;
      }
    >;
  };
}

function inCidr(address: string, cidr: string): boolean {
  const c = parseCidr(cidr);
  const a = parseIp(address);
  return c !== undefined && a !== undefined && cidrContains(c, a);
}

/** Pod → node → ENI → address, from each node's introspection endpoint. */
export async function podTable(cluster: Cluster): Promise<string> {
  const docs = await Promise.all(
    cluster.nodes.map((n) => cluster.introspect(n.index, '/v1/enis') as Promise<EnisDoc>),
  );
  const rows = [['POD', 'NODE', 'INSTANCE', 'ENI', 'DEVICE', 'ADDRESS']];
  for (const pod of cluster.pods) {
    const doc = docs[pod.node] ?? {};
    let eniId = '?';
    let device = '?';
    for (const card of Object.values(doc)) {
      for (const eni of Object.values(card.ENIs)) {
        const cidrs = [...Object.keys(eni.AvailableIPv4Cidrs), ...Object.keys(eni.IPv6Cidrs ?? {})];
        if (cidrs.some((c) => inCidr(pod.address, c))) {
          eniId = eni.ID;
          device = String(eni.DeviceNumber);
        }
      }
    }
    rows.push([
      `${pod.namespace}/${pod.name}`,
      `node${pod.node}`,
      cluster.nodes[pod.node]?.instance.instanceId ?? '?',
      eniId,
      device,
      pod.address,
    ]);
  }
  return formatTable(rows);
}

/**
 * Every pod pings every other pod and the internet host (in a dual-stack VPC both: the IPv4-only one, which IPv6
 * pods reach through egress-cni, and the IPv6-only one): a ✓/✗ grid.
 */
export async function connectivityMatrix(cluster: Cluster): Promise<{ text: string; ok: boolean }> {
  const { internet } = cluster.vpc.describe();
  const pods: ClusterPod[] = [...cluster.pods];
  const targets = [
    ...pods.map((p) => ({ label: p.name, address: p.address })),
    { label: internet.hostIpv6 ? 'internet-v4' : 'internet', address: internet.host },
    ...(internet.hostIpv6 ? [{ label: 'internet-v6', address: internet.hostIpv6 }] : []),
  ];
  const rows = [['FROM \\ TO', ...targets.map((t) => t.label)]];
  let ok = true;
  for (const from of pods) {
    const results = await Promise.all(
      targets.map((t) =>
        t.address === from.address ? Promise.resolve(true) : cluster.ping(from.netnsPath, t.address),
      ),
    );
    ok &&= results.every(Boolean);
    rows.push([
      from.name,
      ...results.map((r, i) => (targets[i]?.address === from.address ? '-' : r ? '✓' : '✗')),
    ]);
  }
  return { text: formatTable(rows), ok };
}

/** ENIs and addresses per node (the warm pool). */
export async function poolState(cluster: Cluster): Promise<string> {
  const rows = [['NODE', 'ENIS', 'TOTAL IPS', 'ASSIGNED', 'WARM (FREE)']];
  for (const n of cluster.nodes) {
    const doc = (await cluster.introspect(n.index, '/v1/enis')) as EnisDoc;
    const card = doc['0'];
    const enis = card ? Object.keys(card.ENIs).length : 0;
    const total = card?.TotalIPs ?? 0;
    const assigned = card?.AssignedIPs ?? 0;
    rows.push([`node${n.index}`, String(enis), String(total), String(assigned), String(total - assigned)]);
  }
  return formatTable(rows);
}

/**
 * The cluster as the Kubernetes API holds it: each Node with its InternalIP and the CNINode features aws-node
 * recorded, each pod with the address the kubelet reported and the `vpc.amazonaws.com/pod-ips` annotation
 * aws-node wrote (ANNOTATE_POD_IP). Read in process from the cluster's kube-simulator.
 */
export function kubernetesView(cluster: Cluster): string {
  const objects = cluster.kube.sim.objects;
  const nodeRows = [['NODE', 'INSTANCE', 'INTERNAL-IP', 'CNINODE FEATURES']];
  for (const n of cluster.nodes) {
    const node = objects.get('v1', 'nodes', n.nodeName);
    const addresses =
      (node?.status as { addresses?: { type: string; address: string }[] } | undefined)?.addresses ?? [];
    const cniNode = objects.get('vpcresources.k8s.aws/v1alpha1', 'cninodes', n.nodeName);
    const features = (cniNode?.spec as { features?: { name: string; value?: string }[] } | undefined)
      ?.features;
    nodeRows.push([
      n.nodeName,
      n.instance.instanceId,
      addresses.find((a) => a.type === 'InternalIP')?.address ?? '?',
      cniNode === undefined
        ? '(no CNINode yet)'
        : features?.length
          ? features.map((f) => (f.value ? `${f.name}=${f.value}` : f.name)).join(',')
          : '[]',
    ]);
  }
  const podRows = [['POD', 'NODE', 'PHASE', 'POD-IP', 'vpc.amazonaws.com/pod-ips']];
  for (const p of cluster.pods) {
    const obj = objects.get('v1', 'pods', p.name, p.namespace);
    const status = obj?.status as { phase?: string; podIP?: string } | undefined;
    const annotations = obj?.metadata?.annotations as Record<string, string> | undefined;
    podRows.push([
      `${p.namespace}/${p.name}`,
      String((obj?.spec as { nodeName?: string } | undefined)?.nodeName ?? '?'),
      status?.phase ?? '?',
      status?.podIP ?? '',
      annotations?.['vpc.amazonaws.com/pod-ips'] ?? '(not yet)',
    ]);
  }
  return `${formatTable(nodeRows)}\n\n${formatTable(podRows)}`;
}
