import { eventsV1Converter } from './event-conversion.js';
import type { KubeObject, ListStrategy, ResourceType } from './resource-type.js';
import type { StatusCause } from './status.js';
import { invalidValue, nameProblems, requiredValue } from './validation.js';

const META = ['apiVersion', 'kind', 'metadata'];

function podSpecStrategies(prefix: string): Record<string, ListStrategy> {
  const out: Record<string, ListStrategy> = {};
  for (const c of ['containers', 'initContainers', 'ephemeralContainers']) {
    out[`${prefix}.${c}`] = { mergeKey: 'name' };
    out[`${prefix}.${c}.env`] = { mergeKey: 'name' };
    out[`${prefix}.${c}.ports`] = { mergeKey: 'containerPort' };
    out[`${prefix}.${c}.volumeMounts`] = { mergeKey: 'mountPath' };
    out[`${prefix}.${c}.volumeDevices`] = { mergeKey: 'devicePath' };
  }
  out[`${prefix}.volumes`] = { mergeKey: 'name' };
  out[`${prefix}.imagePullSecrets`] = { mergeKey: 'name' };
  out[`${prefix}.hostAliases`] = { mergeKey: 'ip' };
  out[`${prefix}.resourceClaims`] = { mergeKey: 'name' };
  return out;
}

const COMMON: Record<string, ListStrategy> = {
  'metadata.finalizers': { set: true },
  'metadata.ownerReferences': { mergeKey: 'uid' },
};

interface BuiltinSpec {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly fields: readonly string[];
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  readonly status?: boolean;
  readonly generation?: boolean;
  readonly nameRule?: ResourceType['nameRule'];
  readonly storageKey?: string;
  readonly fieldSelectors?: readonly string[];
  readonly lists?: Record<string, ListStrategy>;
  readonly validate?: ResourceType['validate'];
  readonly defaultOnCreate?: ResourceType['defaultOnCreate'];
  readonly converter?: ResourceType['converter'];
  readonly deleteReturnsObject?: boolean;
}

function builtin(s: BuiltinSpec): ResourceType {
  return {
    group: s.group,
    version: s.version,
    kind: s.kind,
    listKind: `${s.kind}List`,
    plural: s.plural,
    singular: s.kind.toLowerCase(),
    namespaced: s.namespaced,
    shortNames: s.shortNames ?? [],
    categories: s.categories ?? [],
    statusSubresource: s.status ?? false,
    strategicMerge: true,
    listStrategies: { ...COMMON, ...(s.lists ?? {}) },
    generation: s.generation ?? false,
    nameRule: s.nameRule ?? 'subdomain',
    storageKey: s.storageKey ?? `${s.group}/${s.plural}`,
    fieldSelectors: s.fieldSelectors ?? [],
    topLevelFields: [...META, ...s.fields],
    ...(s.validate ? { validate: s.validate } : {}),
    ...(s.defaultOnCreate ? { defaultOnCreate: s.defaultOnCreate } : {}),
    ...(s.converter ? { converter: s.converter } : {}),
    deleteReturnsObject: s.deleteReturnsObject ?? false,
    custom: false,
  };
}

function record(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

function validatePod(obj: KubeObject): StatusCause[] {
  const spec = record(obj.spec);
  if (!spec) return [requiredValue('spec')];
  const out: StatusCause[] = [];
  const containers = spec.containers;
  if (!Array.isArray(containers) || containers.length === 0) return [requiredValue('spec.containers')];
  const seen = new Set<string>();
  containers.forEach((c, i) => {
    const rec = record(c);
    const name = rec?.name;
    if (typeof name !== 'string' || name === '') out.push(requiredValue(`spec.containers[${i}].name`));
    else {
      out.push(...nameProblems('label', name, `spec.containers[${i}].name`));
      if (seen.has(name))
        out.push({
          reason: 'FieldValueDuplicate',
          message: `Duplicate value: "${name}"`,
          field: `spec.containers[${i}].name`,
        });
      seen.add(name);
    }
    if (typeof rec?.image !== 'string' || rec.image === '')
      out.push(requiredValue(`spec.containers[${i}].image`));
  });
  if (
    spec.nodeName !== undefined &&
    (typeof spec.nodeName !== 'string' || nameProblems('subdomain', spec.nodeName).length > 0)
  )
    out.push(invalidValue('spec.nodeName', spec.nodeName, 'must be a valid node name'));
  return out;
}

function podUpdateProblems(obj: KubeObject, old: KubeObject | undefined): StatusCause[] {
  if (!old) return validatePod(obj);
  const oldNode = record(old.spec)?.nodeName;
  const newNode = record(obj.spec)?.nodeName;
  if (oldNode !== undefined && oldNode !== newNode)
    return [
      {
        reason: 'FieldValueForbidden',
        message:
          'Forbidden: pod updates may not change fields other than `spec.containers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) or `spec.terminationGracePeriodSeconds`',
        field: 'spec',
      },
    ];
  return validatePod(obj);
}

function validateEvent(obj: KubeObject): StatusCause[] {
  const out: StatusCause[] = [];
  const inv = record(obj.involvedObject);
  if (!inv) out.push(requiredValue('involvedObject'));
  if (obj.type !== undefined && obj.type !== 'Normal' && obj.type !== 'Warning')
    out.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(obj.type)}: supported values: "Normal", "Warning"`,
      field: 'type',
    });
  return out;
}

/**
 * The length limits the API server holds an `events.k8s.io/v1` write to (bytes, as Go's `len`): `note` 1024,
 * `reason`, `action` and `reportingInstance` 128. An Event past one is refused, not cut.
 */
const EVENTS_V1_LIMITS: readonly (readonly [string, number])[] = [
  ['note', 1024],
  ['reason', 128],
  ['action', 128],
  ['reportingInstance', 128],
];

function eventsV1Lengths(obj: KubeObject): StatusCause[] {
  const out: StatusCause[] = [];
  for (const [field, limit] of EVENTS_V1_LIMITS) {
    const v = obj[field];
    if (typeof v === 'string' && Buffer.byteLength(v) > limit)
      out.push(invalidValue(field, '', `can have at most ${limit} characters`));
  }
  return out;
}

function validateRoleRef(obj: KubeObject): StatusCause[] {
  const ref = record(obj.roleRef);
  if (!ref) return [requiredValue('roleRef')];
  const out: StatusCause[] = [];
  if (ref.apiGroup !== 'rbac.authorization.k8s.io')
    out.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(ref.apiGroup)}: supported values: "rbac.authorization.k8s.io"`,
      field: 'roleRef.apiGroup',
    });
  if (ref.kind !== 'Role' && ref.kind !== 'ClusterRole')
    out.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(ref.kind)}: supported values: "Role", "ClusterRole"`,
      field: 'roleRef.kind',
    });
  if (typeof ref.name !== 'string' || ref.name === '') out.push(requiredValue('roleRef.name'));
  const subjects = obj.subjects;
  if (subjects !== undefined && subjects !== null && !Array.isArray(subjects))
    out.push(invalidValue('subjects', subjects, 'must be a list'));
  if (Array.isArray(subjects))
    subjects.forEach((s, i) => {
      const r = record(s);
      if (!r || typeof r.name !== 'string' || r.name === '') out.push(requiredValue(`subjects[${i}].name`));
      if (!r || !['User', 'Group', 'ServiceAccount'].includes(r.kind as string))
        out.push({
          reason: 'FieldValueNotSupported',
          message: `Unsupported value: ${JSON.stringify(r?.kind)}: supported values: "ServiceAccount", "User", "Group"`,
          field: `subjects[${i}].kind`,
        });
    });
  return out;
}

function validateRules(obj: KubeObject): StatusCause[] {
  const rules = obj.rules;
  if (rules === undefined || rules === null) return [];
  if (!Array.isArray(rules)) return [invalidValue('rules', rules, 'must be a list')];
  const out: StatusCause[] = [];
  rules.forEach((r, i) => {
    const rec = record(r);
    if (!rec || !Array.isArray(rec.verbs) || rec.verbs.length === 0)
      out.push(requiredValue(`rules[${i}].verbs`));
  });
  return out;
}

function roleRefImmutable(obj: KubeObject, old: KubeObject | undefined): StatusCause[] {
  if (old && JSON.stringify(old.roleRef) !== JSON.stringify(obj.roleRef))
    return [invalidValue('roleRef', obj.roleRef, 'cannot change roleRef')];
  return validateRoleRef(obj);
}

function validateDaemonSet(obj: KubeObject): StatusCause[] {
  const spec = record(obj.spec);
  if (!spec) return [requiredValue('spec')];
  const out: StatusCause[] = [];
  if (!record(spec.selector)) out.push(requiredValue('spec.selector'));
  const template = record(spec.template);
  if (!template) out.push(requiredValue('spec.template'));
  else
    out.push(
      ...validatePod({ spec: template.spec }).map((c) => ({ ...c, field: `spec.template.${c.field}` })),
    );
  return out;
}

function validateLease(obj: KubeObject): StatusCause[] {
  const spec = record(obj.spec);
  if (!spec) return [];
  const out: StatusCause[] = [];
  for (const f of ['leaseDurationSeconds', 'leaseTransitions'] as const) {
    const v = spec[f];
    if (
      v !== undefined &&
      v !== null &&
      (!Number.isInteger(v) || (v as number) < (f === 'leaseDurationSeconds' ? 1 : 0))
    )
      out.push(
        invalidValue(
          `spec.${f}`,
          v,
          f === 'leaseDurationSeconds' ? 'must be greater than 0' : 'must be greater than or equal to 0',
        ),
      );
  }
  return out;
}

/** The built-in resources the simulator serves (without CRDs). */
export const BUILTIN_TYPES: readonly ResourceType[] = [
  builtin({
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
    fields: ['spec', 'status'],
    shortNames: ['ns'],
    status: true,
    nameRule: 'label',
    fieldSelectors: ['status.phase'],
    lists: { 'spec.finalizers': { set: true } },
    defaultOnCreate: (o) => {
      o.spec = { finalizers: ['kubernetes'], ...(record(o.spec) ?? {}) };
      o.status = { phase: 'Active' };
      const meta = o.metadata!;
      meta.labels = { ...(record(meta.labels) ?? {}), 'kubernetes.io/metadata.name': meta.name };
    },
  }),
  builtin({
    group: '',
    version: 'v1',
    kind: 'Node',
    plural: 'nodes',
    namespaced: false,
    fields: ['spec', 'status'],
    shortNames: ['no'],
    status: true,
    fieldSelectors: ['spec.unschedulable'],
    lists: {
      'spec.taints': { mergeKey: 'key' },
      'spec.podCIDRs': { set: true },
      'status.addresses': { mergeKey: 'type' },
      'status.conditions': { mergeKey: 'type' },
      'status.images': { mergeKey: 'names' },
      'status.volumesAttached': { mergeKey: 'name' },
    },
  }),
  builtin({
    group: '',
    version: 'v1',
    kind: 'Pod',
    plural: 'pods',
    namespaced: true,
    fields: ['spec', 'status'],
    shortNames: ['po'],
    categories: ['all'],
    status: true,
    fieldSelectors: [
      'spec.nodeName',
      'spec.serviceAccountName',
      'spec.schedulerName',
      'spec.restartPolicy',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ],
    lists: {
      ...podSpecStrategies('spec'),
      'status.conditions': { mergeKey: 'type' },
      'status.podIPs': { mergeKey: 'ip' },
      'spec.tolerations': { mergeKey: 'key' },
    },
    validate: podUpdateProblems,
    defaultOnCreate: (o) => {
      const spec = record(o.spec);
      if (spec) {
        spec.restartPolicy ??= 'Always';
        spec.dnsPolicy ??= 'ClusterFirst';
        spec.schedulerName ??= 'default-scheduler';
        spec.terminationGracePeriodSeconds ??= 30;
        spec.serviceAccountName ??= 'default';
        spec.serviceAccount ??= spec.serviceAccountName;
      }
      o.status = { phase: 'Pending', qosClass: 'BestEffort' };
    },
    deleteReturnsObject: true,
  }),
  builtin({
    group: '',
    version: 'v1',
    kind: 'ServiceAccount',
    plural: 'serviceaccounts',
    namespaced: true,
    fields: ['secrets', 'imagePullSecrets', 'automountServiceAccountToken'],
    shortNames: ['sa'],
    lists: { secrets: { mergeKey: 'name' }, imagePullSecrets: { mergeKey: 'name' } },
  }),
  builtin({
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    namespaced: true,
    fields: ['data', 'binaryData', 'immutable'],
    shortNames: ['cm'],
    validate: (o, old) => {
      const out: StatusCause[] = [];
      for (const f of ['data', 'binaryData'] as const) {
        const d = o[f];
        if (d === undefined || d === null) continue;
        const rec = record(d);
        if (!rec) out.push(invalidValue(f, d, 'must be a map of strings'));
        else
          for (const [k, v] of Object.entries(rec)) {
            if (!/^[-._a-zA-Z0-9]+$/.test(k))
              out.push(
                invalidValue(
                  f,
                  k,
                  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                ),
              );
            if (typeof v !== 'string') out.push(invalidValue(`${f}[${k}]`, v, 'must be a string'));
          }
      }
      if (
        old?.immutable === true &&
        (JSON.stringify(old.data) !== JSON.stringify(o.data) ||
          JSON.stringify(old.binaryData) !== JSON.stringify(o.binaryData) ||
          o.immutable !== true)
      )
        out.push({
          reason: 'FieldValueForbidden',
          message: 'Forbidden: field is immutable when `immutable` is set',
          field: 'data',
        });
      return out;
    },
  }),
  builtin({
    group: '',
    version: 'v1',
    kind: 'Event',
    plural: 'events',
    namespaced: true,
    fields: [
      'involvedObject',
      'reason',
      'message',
      'source',
      'firstTimestamp',
      'lastTimestamp',
      'count',
      'type',
      'eventTime',
      'series',
      'action',
      'related',
      'reportingComponent',
      'reportingInstance',
    ],
    shortNames: ['ev'],
    nameRule: 'subdomain',
    fieldSelectors: [
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source',
      'type',
    ],
    validate: validateEvent,
  }),
  builtin({
    group: 'events.k8s.io',
    version: 'v1',
    kind: 'Event',
    plural: 'events',
    namespaced: true,
    fields: [
      'eventTime',
      'series',
      'reportingController',
      'reportingInstance',
      'action',
      'reason',
      'regarding',
      'related',
      'note',
      'type',
      'deprecatedSource',
      'deprecatedFirstTimestamp',
      'deprecatedLastTimestamp',
      'deprecatedCount',
    ],
    shortNames: ['ev'],
    storageKey: '/events',
    fieldSelectors: [
      'regarding.kind',
      'regarding.namespace',
      'regarding.name',
      'regarding.uid',
      'reason',
      'type',
    ],
    converter: eventsV1Converter,
    validate: (o) => [
      ...validateEvent(eventsV1Converter.toStorage(o)).map((c) => ({
        ...c,
        field: c.field.replace(/^involvedObject/, 'regarding'),
      })),
      ...eventsV1Lengths(o),
    ],
  }),
  builtin({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'Role',
    plural: 'roles',
    namespaced: true,
    fields: ['rules'],
    nameRule: 'path',
    validate: validateRules,
  }),
  builtin({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'ClusterRole',
    plural: 'clusterroles',
    namespaced: false,
    fields: ['rules', 'aggregationRule'],
    nameRule: 'path',
    validate: validateRules,
  }),
  builtin({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'RoleBinding',
    plural: 'rolebindings',
    namespaced: true,
    fields: ['subjects', 'roleRef'],
    nameRule: 'path',
    validate: roleRefImmutable,
  }),
  builtin({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'ClusterRoleBinding',
    plural: 'clusterrolebindings',
    namespaced: false,
    fields: ['subjects', 'roleRef'],
    nameRule: 'path',
    validate: roleRefImmutable,
  }),
  builtin({
    group: 'apps',
    version: 'v1',
    kind: 'DaemonSet',
    plural: 'daemonsets',
    namespaced: true,
    fields: ['spec', 'status'],
    shortNames: ['ds'],
    categories: ['all'],
    status: true,
    generation: true,
    lists: { ...podSpecStrategies('spec.template.spec'), 'status.conditions': { mergeKey: 'type' } },
    validate: validateDaemonSet,
    defaultOnCreate: (o) => {
      const spec = record(o.spec);
      if (spec) {
        spec.revisionHistoryLimit ??= 10;
        spec.updateStrategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } };
      }
      o.status = {
        currentNumberScheduled: 0,
        numberMisscheduled: 0,
        desiredNumberScheduled: 0,
        numberReady: 0,
      };
    },
  }),
  builtin({
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    plural: 'leases',
    namespaced: true,
    fields: ['spec'],
    validate: validateLease,
  }),
  builtin({
    group: '',
    version: 'v1',
    kind: 'Service',
    plural: 'services',
    namespaced: true,
    fields: ['spec', 'status'],
    shortNames: ['svc'],
    categories: ['all'],
    status: true,
    lists: { 'spec.ports': { mergeKey: 'port' } },
  }),
  builtin({
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    kind: 'MutatingWebhookConfiguration',
    plural: 'mutatingwebhookconfigurations',
    namespaced: false,
    fields: ['webhooks'],
    categories: ['api-extensions'],
    lists: { webhooks: { mergeKey: 'name' } },
  }),
  builtin({
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    kind: 'ValidatingWebhookConfiguration',
    plural: 'validatingwebhookconfigurations',
    namespaced: false,
    fields: ['webhooks'],
    categories: ['api-extensions'],
    lists: { webhooks: { mergeKey: 'name' } },
  }),
  builtin({
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
    fields: ['spec', 'status'],
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    status: true,
    generation: true,
    lists: { 'status.conditions': { mergeKey: 'type' } },
  }),
];

/** Record accessor shared by the type definitions. */
export const asRecord = record;
