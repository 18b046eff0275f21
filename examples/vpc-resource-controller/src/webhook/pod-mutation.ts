/**
 * The pod mutation of the reference's `mpod.vpc.k8s.aws` webhook, written from its behaviour: a Linux pod that a
 * SecurityGroupPolicy selects gets `vpc.amazonaws.com/pod-eni: "1"` in the limits and requests of its first
 * container, so the scheduler places it on a node with branch capacity and the CNI waits for its annotation.
 * Everything else is admitted unchanged. Pure: the policy lookup is a function the caller passes.
 */
import { jsonPointerToken, POD_ENI_RESOURCE } from '@vpc-cni-kit/sgp-branch';
import { type Json, podReviewRequest, type ReviewAnswer, record, reviewAnswer } from './admission-review.js';

export type { ReviewAnswer } from './admission-review.js';

/** The path the webhook serves (the reference's). */
export const POD_MUTATION_PATH = '/mutate-v1-pod';
/** The webhook's name in the MutatingWebhookConfiguration (the reference's). */
export const POD_MUTATION_WEBHOOK_NAME = 'mpod.vpc.k8s.aws';
/** The quantity added (one branch ENI). */
export const POD_ENI_QUANTITY = '1';

/** What the lookup needs of a pod. */
export interface PodToAdmit {
  /** Namespace (the request's when the pod omits it). */
  readonly namespace: string;
  /** Labels. */
  readonly labels: Readonly<Record<string, string>>;
  /** ServiceAccount name (`default` when unset). */
  readonly serviceAccountName: string;
}

/** The security groups the policies give a pod (`[]`: none selects it); rejects when they cannot be read. */
export type PolicyLookup = (pod: PodToAdmit) => Promise<readonly string[]>;

function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(record(v) ?? {})) if (typeof x === 'string') out[k] = x;
  return out;
}

/** Why a pod is admitted without looking at policies, or undefined when policies decide. */
function skipReason(pod: Json): string | undefined {
  const spec = record(pod.spec) ?? {};
  if (spec.hostNetwork === true) return 'SGP not supported on Pod running on HostNetwork';
  const labels = stringMap(record(pod.metadata)?.labels);
  if ('eks.amazonaws.com/fargate-profile' in labels) return 'Fargate pods are not handled by this controller';
  const selector = stringMap(spec.nodeSelector);
  if (selector['kubernetes.io/os'] === 'windows' || selector['beta.kubernetes.io/os'] === 'windows')
    return 'Windows pods get no branch ENI';
  return undefined;
}

/** The JSONPatch setting the pod-eni quantity in the first container's limits and requests. */
export function podEniPatch(firstContainer: Record<string, unknown>): Record<string, unknown>[] {
  const base = '/spec/containers/0/resources';
  const resources = record(firstContainer.resources);
  if (resources === undefined)
    return [
      {
        op: 'add',
        path: base,
        value: {
          limits: { [POD_ENI_RESOURCE]: POD_ENI_QUANTITY },
          requests: { [POD_ENI_RESOURCE]: POD_ENI_QUANTITY },
        },
      },
    ];
  return (['limits', 'requests'] as const).map((part) =>
    record(resources[part]) === undefined
      ? { op: 'add', path: `${base}/${part}`, value: { [POD_ENI_RESOURCE]: POD_ENI_QUANTITY } }
      : { op: 'add', path: `${base}/${part}/${jsonPointerToken(POD_ENI_RESOURCE)}`, value: POD_ENI_QUANTITY },
  );
}

/**
 * Answers one AdmissionReview (`admission.k8s.io/v1`, the parsed request body). A body that is not a review of a
 * pod is 400 with the reason (the API server treats it as a failed call, and its failurePolicy decides); a
 * policy lookup that fails is a denial, as in the reference (a pod that should have its groups is not started
 * without them).
 */
export async function reviewPod(body: unknown, lookup: PolicyLookup): Promise<ReviewAnswer> {
  const parsed = podReviewRequest(body);
  if ('status' in parsed) return parsed;
  const { uid, request } = parsed;
  const pod = record(request.object);
  if (pod === undefined)
    return { status: 400, body: 'the AdmissionReview does not carry a Pod in request.object' };
  const containers = record(pod.spec)?.containers;
  const first = Array.isArray(containers) ? record(containers[0]) : undefined;
  if (first === undefined) return { status: 400, body: 'the Pod has no containers' };
  const answer = (response: Json, mutated = false): ReviewAnswer => reviewAnswer(uid, response, mutated);
  const skip = skipReason(pod);
  if (skip !== undefined) return answer({ allowed: true, status: { message: skip, code: 200 } });
  const meta = record(pod.metadata) ?? {};
  const namespace =
    typeof meta.namespace === 'string' && meta.namespace !== ''
      ? meta.namespace
      : typeof request.namespace === 'string'
        ? request.namespace
        : '';
  // Policies are namespaced: without a namespace there is nothing to look them up in (a real API server always
  // sends one), and a lookup in "" would deny the pod with an unrelated 404.
  if (namespace === '') return { status: 400, body: 'the AdmissionReview names no namespace for the Pod' };
  const sa = record(pod.spec)?.serviceAccountName;
  let groups: readonly string[];
  try {
    groups = await lookup({
      namespace,
      labels: stringMap(meta.labels),
      serviceAccountName: typeof sa === 'string' && sa !== '' ? sa : 'default',
    });
  } catch (e) {
    return answer({
      allowed: false,
      status: {
        code: 403,
        reason: 'Forbidden',
        message: `Failed to get Matching SGP for Pods, rejecting event, error ${e instanceof Error ? e.message : String(e)}`,
      },
    });
  }
  if (groups.length === 0)
    return answer({ allowed: true, status: { message: "Pod didn't match any SGP", code: 200 } });
  const patch = Buffer.from(JSON.stringify(podEniPatch(first))).toString('base64');
  return answer({ allowed: true, patchType: 'JSONPatch', patch }, true);
}
