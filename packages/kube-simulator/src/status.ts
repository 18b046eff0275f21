/** The `reason` values of a Kubernetes `Status` the simulator sends. */
export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'ServiceUnavailable'
  | 'InternalError';

/** One `details.causes` entry of an `Invalid` Status. */
export interface StatusCause {
  /** `FieldValueInvalid`, `FieldValueRequired`, `FieldValueNotSupported`, `FieldValueDuplicate`, `FieldValueForbidden`, `FieldValueTooLong`, `FieldValueTypeInvalid`. */
  readonly reason: string;
  /** Human-readable message without the field path. */
  readonly message: string;
  /** Dotted field path, e.g. `metadata.name`. */
  readonly field: string;
}

/** `details` of a Status. */
export interface StatusDetails {
  /** Object name, when the error concerns one object. */
  readonly name?: string;
  /** API group of the resource (omitted for core). */
  readonly group?: string;
  /** Resource (plural) or Kind, as the real server puts it. */
  readonly kind?: string;
  /** Object uid (successful deletes). */
  readonly uid?: string;
  /** Field errors. */
  readonly causes?: readonly StatusCause[];
}

/** A `meta.k8s.io/v1` Status body. */
export interface Status {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: Record<string, never>;
  readonly status: 'Failure' | 'Success';
  readonly message?: string;
  readonly reason?: StatusReason;
  readonly details?: StatusDetails;
  readonly code: number;
}

/**
 * An API failure: carries the HTTP code and the `Status` the real API server sends for it. Thrown by the
 * store, patch, validation and authorization layers; rendered by the HTTP router.
 */
export class KubeApiError extends Error {
  /** Discriminator. */
  readonly kind = 'KubeApiError' as const;
  /**
   * @param code - HTTP status code
   * @param reason - Status reason
   * @param message - Status message, worded like the real API server's
   * @param details - Status details
   */
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }

  /** The Status body for this error. */
  toStatus(): Status {
    return failureStatus(this.code, this.reason, this.message, this.details);
  }
}

/** Whether `e` is a {@link KubeApiError}. */
export function isKubeApiError(e: unknown): e is KubeApiError {
  return e instanceof KubeApiError;
}

/** Builds a failure Status. */
export function failureStatus(
  code: number,
  reason: StatusReason,
  message: string,
  details?: StatusDetails,
): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  };
}

/** Builds the Success Status a delete of a non-pod object returns. */
export function successStatus(details: StatusDetails): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details, code: 200 };
}

/** A resource reference used in error messages: `pods` or `daemonsets.apps`. */
export interface QualifiedResource {
  /** API group ('' for core). */
  readonly group: string;
  /** Plural resource name. */
  readonly resource: string;
}

function qualified(r: QualifiedResource): string {
  return r.group ? `${r.resource}.${r.group}` : r.resource;
}

function details(r: QualifiedResource, name?: string): StatusDetails {
  return {
    ...(name !== undefined ? { name } : {}),
    ...(r.group ? { group: r.group } : {}),
    kind: r.resource,
  };
}

/** 404 `<resource> "<name>" not found`. */
export function notFound(r: QualifiedResource, name: string): KubeApiError {
  return new KubeApiError(404, 'NotFound', `${qualified(r)} "${name}" not found`, details(r, name));
}

/** 409 AlreadyExists. */
export function alreadyExists(r: QualifiedResource, name: string): KubeApiError {
  return new KubeApiError(409, 'AlreadyExists', `${qualified(r)} "${name}" already exists`, details(r, name));
}

/** 409 Conflict (stale resourceVersion or failed precondition). */
export function conflict(r: QualifiedResource, name: string, why: string): KubeApiError {
  return new KubeApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(r)} "${name}": ${why}`,
    details(r, name),
  );
}

/** The message of a Conflict caused by a stale resourceVersion. */
export const STALE_OBJECT =
  'the object has been modified; please apply your changes to the latest version and try again';

/** 400 BadRequest. */
export function badRequest(message: string): KubeApiError {
  return new KubeApiError(400, 'BadRequest', message);
}

/** 422 Invalid with field causes, e.g. `Pod "x" is invalid: metadata.name: Invalid value: …`. */
export function invalid(
  kind: string,
  group: string,
  name: string,
  causes: readonly StatusCause[],
): KubeApiError {
  const list = causes.map((c) => `${c.field}: ${c.message}`);
  const text = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
  return new KubeApiError(
    422,
    'Invalid',
    `${kind}${group ? `.${group}` : ''} "${name}" is invalid: ${text}`,
    {
      name,
      ...(group ? { group } : {}),
      kind,
      causes,
    },
  );
}

/** 410 Expired (a resourceVersion or continue token older than the retained history). */
export function expired(message: string): KubeApiError {
  return new KubeApiError(410, 'Expired', message);
}

/** 401 Unauthorized. */
export function unauthorized(): KubeApiError {
  return new KubeApiError(401, 'Unauthorized', 'Unauthorized');
}
