import type { KubeObject } from './kube-api.js';

/** The reference's Event reason for an EC2 call refused with `UnauthorizedOperation`. */
export const MISSING_IAM_PERMISSIONS = 'MissingIAMPermissions';

/** Where the reference points operators for the policy aws-node needs. */
export const IAM_POLICY_DOC = 'https://github.com/aws/amazon-vpc-cni-k8s/blob/master/docs/iam-policy.md';

/** Formats a time as the API's MicroTime (`2006-01-02T15:04:05.000000Z`). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** The API server's limit on an `events.k8s.io/v1` Event's `note`, in bytes: a longer one is refused. */
const EVENT_NOTE_LIMIT = 1024;
/** Its limit on `reason`, `action` and `reportingInstance`, in bytes. */
const EVENT_FIELD_LIMIT = 128;

/**
 * `text` cut to at most `limit` UTF-8 bytes, on a character boundary, ending in `suffix` when it was cut (the
 * scheduler cuts its notes the same way): an Event with a long message is written shorter rather than refused.
 */
function cutBytes(text: string, limit: number, suffix = ''): string {
  if (Buffer.byteLength(text) <= limit) return text;
  const room = limit - Buffer.byteLength(suffix);
  let out = '';
  let used = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch);
    if (used + n > room) break;
    out += ch;
    used += n;
  }
  return out + suffix;
}

/**
 * An events.k8s.io/v1 Warning Event about the aws-node pod, reported by controller `aws-node` from this node.
 * `serial` keeps two Events written in the same nanosecond apart (the name is `<pod>.<time in ns + serial>`).
 */
export function awsNodeWarningEvent(o: {
  readonly reason: string;
  readonly action: string;
  readonly note: string;
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid?: string };
  readonly nodeName: string;
  readonly nowMs: number;
  readonly serial?: number;
}): KubeObject {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: {
      name: `${o.pod.name}.${(BigInt(o.nowMs) * 1_000_000n + BigInt(o.serial ?? 0)).toString(16)}`,
      namespace: o.pod.namespace,
    },
    eventTime: microTime(o.nowMs),
    reportingController: 'aws-node',
    reportingInstance: cutBytes(o.nodeName, EVENT_FIELD_LIMIT),
    action: cutBytes(o.action, EVENT_FIELD_LIMIT),
    reason: cutBytes(o.reason, EVENT_FIELD_LIMIT),
    type: 'Warning',
    note: cutBytes(o.note, EVENT_NOTE_LIMIT, ' ...'),
    regarding: {
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: o.pod.namespace,
      name: o.pod.name,
      ...(o.pod.uid ? { uid: o.pod.uid } : {}),
    },
  };
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
  return awsNodeWarningEvent({
    reason: MISSING_IAM_PERMISSIONS,
    action: api,
    note: `Unauthorized operation: failed to call ${api} due to missing permissions. Please refer ${IAM_POLICY_DOC} to attach relevant policy to IAM role`,
    pod: o.pod,
    nodeName: o.nodeName,
    nowMs: o.nowMs,
  });
}
