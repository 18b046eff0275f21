/**
 * The reference's pod annotation validation webhook (`vpod.vpc.k8s.aws`), written from its behaviour: the
 * `vpc.amazonaws.com/pod-eni` annotation names a branch ENI, its MAC and VLAN, and aws-node plumbs what it says, so
 * only the controller may write it. A pod is never created with it (the controller annotates pods after they
 * exist, by an update); an update that adds, changes or removes it is allowed only to the controller's own
 * users. Everything else is admitted. Pure.
 */
import { POD_ENI_ANNOTATION } from '@vpc-cni-kit/sgp-branch';
import { type Json, podReviewRequest, type ReviewAnswer, record, reviewAnswer } from './admission-review.js';

/** The path the webhook serves (the reference's). */
export const ANNOTATION_VALIDATION_PATH = '/validate-v1-pod';
/** The webhook's name in the ValidatingWebhookConfiguration (the reference's). */
export const ANNOTATION_VALIDATION_WEBHOOK_NAME = 'vpod.vpc.k8s.aws';
/**
 * The users that may write the annotation by default: the controller's ServiceAccount in the manifests
 * (`kube-system/vpc-resource-controller`, the reference's first one too).
 */
export const DEFAULT_ANNOTATION_WRITERS: readonly string[] = [
  'system:serviceaccount:kube-system:vpc-resource-controller',
];

/** The pod's annotation: its value, or `undefined` when the pod does not carry it. */
function podEniAnnotation(pod: Json | undefined): string | undefined {
  const annotations = record(record(pod?.metadata)?.annotations);
  if (annotations === undefined || !Object.hasOwn(annotations, POD_ENI_ANNOTATION)) return undefined;
  const v = annotations[POD_ENI_ANNOTATION];
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * Answers one AdmissionReview (`admission.k8s.io/v1`, the parsed request body) of a pod CREATE or UPDATE:
 * - CREATE of a pod carrying `vpc.amazonaws.com/pod-eni`: denied (403), whoever asks;
 * - UPDATE that adds, changes or removes it: denied (403) unless `request.userInfo.username` is one of `writers`;
 * - anything else: allowed.
 *
 * A body that is not a review of a pod is 400 with the reason (the API server treats it as a failed call, and its
 * failurePolicy decides).
 */
export function reviewPodAnnotation(body: unknown, writers: readonly string[]): ReviewAnswer {
  const parsed = podReviewRequest(body);
  if ('status' in parsed) return parsed;
  const { uid, request } = parsed;
  const pod = record(request.object);
  const answer = (response: Json): ReviewAnswer => reviewAnswer(uid, response);
  const deny = (message: string) =>
    answer({ allowed: false, status: { code: 403, reason: 'Forbidden', message } });
  const operation = request.operation;
  if (operation !== 'CREATE' && operation !== 'UPDATE') return answer({ allowed: true });
  if (pod === undefined)
    return { status: 400, body: 'the AdmissionReview does not carry a Pod in request.object' };
  if (operation === 'CREATE') {
    // The controller annotates pods once they exist (an update): no one creates a pod with it.
    if (podEniAnnotation(pod) !== undefined)
      return deny(`pod cannot be created with ${POD_ENI_ANNOTATION} annotation`);
    return answer({ allowed: true });
  }
  const old = record(request.oldObject);
  if (old === undefined)
    return { status: 400, body: 'the AdmissionReview of an UPDATE has no request.oldObject' };
  if (podEniAnnotation(pod) === podEniAnnotation(old)) return answer({ allowed: true });
  const username = record(request.userInfo)?.username;
  if (typeof username === 'string' && writers.includes(username)) return answer({ allowed: true });
  return deny(
    `only vpc-resource-controller may set, change or remove the ${POD_ENI_ANNOTATION} annotation, not ${JSON.stringify(typeof username === 'string' ? username : '')}`,
  );
}
