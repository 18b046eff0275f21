/**
 * A Kubernetes API server subset over real HTTP(S): discovery, core types, RBAC, apps/v1 DaemonSets,
 * coordination leases, CRDs and custom resources, watch, patches, and RBAC authorization of bearer tokens.
 *
 * @packageDocumentation
 */
export {
  type AdmissionDeps,
  type AdmissionInput,
  type AdmissionOperation,
  admitCreate,
  MUTATING_WEBHOOK_STORAGE_KEY,
  VALIDATING_WEBHOOK_STORAGE_KEY,
  type ValidationInput,
  validate,
  validationApplies,
  type WebhookServiceRef,
  type WebhookServiceResolver,
} from './admission.js';
export { asRecord, BUILTIN_TYPES } from './builtin-types.js';
export { type CliIo, runCli, USAGE } from './cli-main.js';
export { type CrdVersion, crdProblems, crdVersions, establishedStatus } from './crd-registry.js';
export { apiGroup, apiGroupList, apiResourceList, apiVersions, SERVER_VERSION } from './discovery.js';
export { eventsV1Converter } from './event-conversion.js';
export { type KubeconfigSpec, renderKubeconfig } from './kubeconfig.js';
export {
  type FieldValidation,
  type ListOptions,
  ObjectApi,
  rfc3339,
  type WriteOptions,
  type WriteResult,
} from './object-api.js';
export { jsonPatch, mergePatch, PATCH_CONTENT_TYPES, type PatchType, strategicMergePatch } from './patch.js';
export { authorize, forbidden, type RbacSource, type RequestAttributes, type UserInfo } from './rbac.js';
export {
  groupVersion,
  type KubeObject,
  type ListStrategy,
  type ResourceType,
  type VersionConverter,
} from './resource-type.js';
export { createRouter, DEFAULT_MAX_BODY_BYTES, type RouterDeps } from './router.js';
export { checkSchema, type JsonSchema, type SchemaResult } from './schema.js';
export {
  type FieldRequirement,
  fieldValue,
  type LabelRequirement,
  type LabelSelector,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
} from './selectors.js';
export {
  type KubeSimFaults,
  type KubeSimObjects,
  type KubeSimOptions,
  type KubeSimSnapshot,
  type KubeSimulator,
  type RequestRecord,
  startKubeSimulator,
} from './simulator.js';
export {
  alreadyExists,
  badRequest,
  conflict,
  expired,
  failureStatus,
  invalid,
  isKubeApiError,
  KubeApiError,
  notFound,
  type QualifiedResource,
  STALE_OBJECT,
  type Status,
  type StatusCause,
  type StatusDetails,
  type StatusReason,
  successStatus,
  unauthorized,
} from './status.js';
export { type Change, type ChangeType, ObjectStore, type StoreOptions, type StoreSnapshot } from './store.js';
export { selfSignedCertificate, TlsError, type TlsMaterial } from './tls.js';
export {
  ADMIN_USER,
  type ServiceAccountBinding,
  serviceAccountUser,
  TokenRegistry,
  type TokenSnapshot,
} from './tokens.js';
export { type ApiGroupInfo, CRD_STORAGE_KEY, sortVersions, TypeRegistry } from './type-registry.js';
export { metadataProblems, type NameRule, nameProblems, qualifiedKeyProblems } from './validation.js';
export {
  nodeTimers,
  type WatchEvent,
  WatchHub,
  type WatchRequest,
  type WatchSink,
  type WatchTimers,
} from './watch-hub.js';
