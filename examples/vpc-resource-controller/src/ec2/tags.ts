/**
 * The tags and descriptions this controller puts on the ENIs it creates: the reference controller's own
 * (`eks:eni:owner`, the cluster tag, the node's instance id, the `aws-k8s-` description prefix), plus two of
 * ours that let a restarted controller find every branch of a node and the pod it was made for from EC2 alone.
 */
import { BRANCH_ENI_DESCRIPTION, BRANCH_POD_TAG } from '@vpc-cni-kit/sgp-branch';

/** `eks:eni:owner`: scopes IAM permissions to the controller's ENIs (the reference's tag). */
export const OWNER_TAG = 'eks:eni:owner';
/** The value of {@link OWNER_TAG}. */
export const OWNER_VALUE = 'eks-vpc-resource-controller';
/** The instance the ENI was created for (the reference's tag). */
export const INSTANCE_TAG = 'node.k8s.amazonaws.com/instance_id';
/** The Kubernetes node a branch was created for (ours: `listBranchEnis` filters on it). */
export const NODE_NAME_TAG = 'vpcresources.k8s.aws/node-name';
/** The UID of the pod a branch was created for (ours: recovery adopts a branch by it). */
export const POD_UID_TAG = 'vpcresources.k8s.aws/pod-uid';
/** `<namespace>/<name>` of the pod a branch was created for (for operators, and for the node: see `BRANCH_POD_TAG`). */
export const POD_TAG = BRANCH_POD_TAG;
/** The reference's description of a trunk ENI (`aws-k8s-` + `trunk-eni`). */
export const TRUNK_DESCRIPTION = 'aws-k8s-trunk-eni';
/** The reference's description of a branch ENI (`aws-k8s-` + `branch-eni`; the node looks for it too). */
export const BRANCH_DESCRIPTION = BRANCH_ENI_DESCRIPTION;

/** `kubernetes.io/cluster/<name>`, valued `owned`: every ENI of this cluster's controller carries it. */
export function clusterTagKey(clusterName: string): string {
  return `kubernetes.io/cluster/${clusterName}`;
}

/** A tag list as EC2 takes it. */
export type TagList = { Key: string; Value: string }[];

/** The tags common to every ENI this controller creates. */
export function ownedTags(clusterName: string, instanceId: string, nodeName: string): TagList {
  return [
    { Key: OWNER_TAG, Value: OWNER_VALUE },
    { Key: clusterTagKey(clusterName), Value: 'owned' },
    { Key: INSTANCE_TAG, Value: instanceId },
    { Key: NODE_NAME_TAG, Value: nodeName },
  ];
}

/** The value of tag `key` in an EC2 tag set, if present. */
export function tagValue(
  tags: readonly { Key?: string | undefined; Value?: string | undefined }[] | undefined,
  key: string,
): string | undefined {
  return tags?.find((t) => t.Key === key)?.Value;
}
