import type { KubeObject } from './kube-api.js';

/** The reference's Event reason for an EC2 call refused with `UnauthorizedOperation`. */
export const MISSING_IAM_PERMISSIONS = 'MissingIAMPermissions';

/** Where the reference points operators for the policy aws-node needs. */
export const IAM_POLICY_DOC = 'https://github.com/aws/amazon-vpc-cni-k8s/blob/master/docs/iam-policy.md';

/** Formats a time as the API's MicroTime (`2006-01-02T15:04:05.000000Z`). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * The events.k8s.io/v1 Warning Event the reference emits when an EC2 call fails with `UnauthorizedOperation`:
 * about the aws-node pod, reporting controller `aws-node`, action `ec2:<API>`.
 */
export function missingIamPermissionsEvent(o: {
  readonly action: string;
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid?: string };
  readonly nodeName: string;
  readonly nowMs: number;
}): KubeObject {
  const api = `ec2:${o.action}`;
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: {
      name: `${o.pod.name}.${(BigInt(o.nowMs) * 1_000_000n).toString(16)}`,
      namespace: o.pod.namespace,
    },
    eventTime: microTime(o.nowMs),
    reportingController: 'aws-node',
    reportingInstance: o.nodeName,
    action: api,
    reason: MISSING_IAM_PERMISSIONS,
    type: 'Warning',
    note: `Unauthorized operation: failed to call ${api} due to missing permissions. Please refer ${IAM_POLICY_DOC} to attach relevant policy to IAM role`,
    regarding: {
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: o.pod.namespace,
      name: o.pod.name,
      ...(o.pod.uid ? { uid: o.pod.uid } : {}),
    },
  };
}
