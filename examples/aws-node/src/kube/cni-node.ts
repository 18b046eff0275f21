import {
  type CustomResource,
  isKubeCallError,
  type KubeApi,
  KubeCallError,
  type KubeObject,
} from './kube-api.js';

/** The CNINode custom resource (`cninodes.vpcresources.k8s.aws`, cluster-scoped, named after the node). */
export const CNINODE: CustomResource = {
  group: 'vpcresources.k8s.aws',
  version: 'v1alpha1',
  plural: 'cninodes',
};

/** One `spec.features` entry (`SecurityGroupsForPods`, `CustomNetworking=<ENIConfig>`). */
export interface CniNodeFeature {
  readonly name: string;
  readonly value?: string;
}

/**
 * The `spec.features` of a CNINode read from the API. Absent is none; anything else that is not a list of
 * `{name: string, value?: string}` is a CNINode this daemon does not understand, and it writes nothing over it:
 * a {@link KubeCallError} `Other` (as an answer that is not a JSON object), which its caller logs and retries.
 */
function features(obj: KubeObject): CniNodeFeature[] {
  const list = (obj.spec as { features?: unknown } | undefined)?.features;
  if (list === undefined || list === null) return [];
  const where = `CNINode ${obj.metadata?.name ?? ''}`;
  if (!Array.isArray(list)) throw new KubeCallError('Other', 200, `${where}: spec.features is not a list`);
  list.forEach((f: unknown, i) => {
    const entry = f as { name?: unknown; value?: unknown } | null;
    if (
      entry === null ||
      typeof entry !== 'object' ||
      Array.isArray(entry) ||
      typeof entry.name !== 'string' ||
      (entry.value !== undefined && typeof entry.value !== 'string')
    )
      throw new KubeCallError(
        'Other',
        200,
        `${where}: spec.features[${i}] is ${JSON.stringify(f)}, not {name: string, value?: string}`,
      );
  });
  return list as CniNodeFeature[];
}

function same(a: CniNodeFeature, b: CniNodeFeature): boolean {
  return a.name === b.name && (a.value ?? '') === (b.value ?? '');
}

/** What {@link ensureCniNode} did. */
export type CniNodeOutcome = 'created' | 'patched' | 'unchanged';

/**
 * Makes this node's CNINode exist and carry `wanted` features, as the reference's `AddFeatureToCNINode` does:
 * read it, add the missing features, and write them with a merge patch carrying the resourceVersion read
 * (optimistic lock), re-reading on a 409. Where no VPC resource controller created the CNINode, this daemon
 * creates it. Features it did not add are kept.
 */
export async function ensureCniNode(
  api: KubeApi,
  nodeName: string,
  nodeUid: string | undefined,
  wanted: readonly CniNodeFeature[],
  attempts = 5,
): Promise<CniNodeOutcome> {
  for (let i = 0; ; i++) {
    let current: KubeObject;
    try {
      current = await api.getClusterObject(CNINODE, nodeName);
    } catch (e) {
      if (!isKubeCallError(e, 'NotFound')) throw e;
      try {
        await api.createClusterObject(CNINODE, {
          apiVersion: `${CNINODE.group}/${CNINODE.version}`,
          kind: 'CNINode',
          metadata: {
            name: nodeName,
            ...(nodeUid
              ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUid }] }
              : {}),
          },
          spec: { features: wanted.map((f) => ({ ...f })) },
        } as KubeObject);
        return 'created';
      } catch (c) {
        if (isKubeCallError(c, 'AlreadyExists') && i + 1 < attempts) continue;
        throw c;
      }
    }
    const have = features(current);
    const missing = wanted.filter((w) => !have.some((h) => same(h, w)));
    if (missing.length === 0) return 'unchanged';
    try {
      await api.mergePatchClusterObject(CNINODE, nodeName, {
        metadata: { resourceVersion: current.metadata?.resourceVersion },
        spec: { features: [...have, ...missing] },
      });
      return 'patched';
    } catch (e) {
      if (isKubeCallError(e, 'Conflict') && i + 1 < attempts) continue;
      throw e;
    }
  }
}
