/**
 * The envelope both pod webhooks share: the request of an `admission.k8s.io/v1` AdmissionReview about a core `v1`
 * Pod, and the review that answers it.
 */

/** A JSON object. */
export type Json = Record<string, unknown>;

/** `v` when it is a JSON object (not an array, not null). */
export function record(v: unknown): Json | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
}

/** The HTTP answer to one review: 200 with an AdmissionReview, or 400 with a plain-text reason. */
export type ReviewAnswer =
  | { readonly status: 200; readonly body: Record<string, unknown>; readonly mutated: boolean }
  | { readonly status: 400; readonly body: string };

/**
 * The request of a review about a Pod (`request.kind` core `v1` Pod, a non-empty `request.uid`), or the 400 that
 * refuses a body that is not one. `request.object` is left to the caller (a DELETE has none).
 */
export function podReviewRequest(body: unknown): { uid: string; request: Json } | ReviewAnswer {
  const review = record(body);
  const request = record(review?.request);
  if (review?.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview')
    return { status: 400, body: 'expected an admission.k8s.io/v1 AdmissionReview' };
  if (request === undefined || typeof request.uid !== 'string' || request.uid === '')
    return { status: 400, body: 'the AdmissionReview has no request.uid' };
  const kind = record(request.kind);
  if (kind?.kind !== 'Pod' || (kind.group ?? '') !== '')
    return { status: 400, body: 'the AdmissionReview does not carry a Pod in request.object' };
  return { uid: request.uid, request };
}

/** The AdmissionReview answering request `uid` with `response` (`allowed`, `status`, `patch`…). */
export function reviewAnswer(uid: string, response: Json, mutated = false): ReviewAnswer {
  return {
    status: 200,
    body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, ...response } },
    mutated,
  };
}
