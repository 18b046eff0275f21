import { asRecord } from './builtin-types.js';
import type { KubeObject, ResourceType } from './resource-type.js';
import type { JsonSchema } from './schema.js';
import type { StatusCause } from './status.js';
import { invalidValue, nameProblems, requiredValue } from './validation.js';

/** A served version of a CRD with its resource type. */
export interface CrdVersion {
  /** The version name. */
  readonly name: string;
  /** Whether it is the storage version. */
  readonly storage: boolean;
  /** The type served at this version. */
  readonly type: ResourceType;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Validates a CustomResourceDefinition (apiextensions.k8s.io/v1) the way the real server does, in brief. */
export function crdProblems(crd: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out: StatusCause[] = [];
  const spec = asRecord(crd.spec);
  if (!spec) return [requiredValue('spec')];
  const group = str(spec.group);
  const names = asRecord(spec.names);
  if (!group) out.push(requiredValue('spec.group'));
  else if (!group.includes('.'))
    out.push(invalidValue('spec.group', group, 'should be a domain with at least one dot'));
  if (!names) out.push(requiredValue('spec.names'));
  const plural = str(names?.plural);
  const kind = str(names?.kind);
  if (!plural) out.push(requiredValue('spec.names.plural'));
  else out.push(...nameProblems('label', plural, 'spec.names.plural'));
  if (!kind) out.push(requiredValue('spec.names.kind'));
  if (names?.singular !== undefined)
    out.push(...nameProblems('label', String(names.singular), 'spec.names.singular'));
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster')
    out.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(spec.scope ?? '')}: supported values: "Cluster", "Namespaced"`,
      field: 'spec.scope',
    });
  if (plural && group && crd.metadata?.name !== `${plural}.${group}`)
    out.push(invalidValue('metadata.name', crd.metadata?.name, `must be spec.names.plural+"."+spec.group`));
  const versions = spec.versions;
  if (!Array.isArray(versions) || versions.length === 0) out.push(requiredValue('spec.versions'));
  else {
    let storage = 0;
    versions.forEach((v, i) => {
      const rec = asRecord(v);
      if (!str(rec?.name)) out.push(requiredValue(`spec.versions[${i}].name`));
      if (rec?.storage === true) storage++;
      if (typeof rec?.served !== 'boolean') out.push(requiredValue(`spec.versions[${i}].served`));
      if (!asRecord(asRecord(rec?.schema)?.openAPIV3Schema))
        out.push(requiredValue(`spec.versions[${i}].schema.openAPIV3Schema`));
    });
    if (storage !== 1)
      out.push(
        invalidValue(
          'spec.versions',
          versions.length,
          'must have exactly one version marked as storage version',
        ),
      );
  }
  if (old) {
    const oldSpec = asRecord(old.spec);
    if (oldSpec?.scope !== spec.scope) out.push(invalidValue('spec.scope', spec.scope, 'field is immutable'));
    if (oldSpec?.group !== spec.group) out.push(invalidValue('spec.group', spec.group, 'field is immutable'));
  }
  return out;
}

/** The `status` a CRD gets once its names are accepted (the simulator establishes it at once). */
export function establishedStatus(crd: KubeObject, now: string): Record<string, unknown> {
  const spec = asRecord(crd.spec)!;
  const names = asRecord(spec.names)!;
  const accepted = {
    ...names,
    singular: names.singular ?? String(names.plural),
    listKind: names.listKind ?? `${names.kind}List`,
  };
  const condition = (type: string, reason: string, message: string) => ({
    type,
    status: 'True',
    lastTransitionTime: now,
    reason,
    message,
  });
  return {
    acceptedNames: accepted,
    conditions: [
      condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
      condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
    ],
    storedVersions: (spec.versions as Record<string, unknown>[])
      .filter((v) => v.storage === true)
      .map((v) => v.name),
  };
}

/** The resource types a valid CRD serves, one per served version. */
export function crdVersions(crd: KubeObject): CrdVersion[] {
  const spec = asRecord(crd.spec)!;
  const names = asRecord(spec.names)!;
  const group = String(spec.group);
  const plural = String(names.plural);
  const kind = String(names.kind);
  const versions = spec.versions as Record<string, unknown>[];
  return versions
    .filter((v) => v.served === true)
    .map((v) => {
      const schema = asRecord(asRecord(v.schema)?.openAPIV3Schema) as JsonSchema;
      const sub = asRecord(v.subresources);
      const type: ResourceType = {
        group,
        version: String(v.name),
        kind,
        listKind: str(names.listKind) ?? `${kind}List`,
        plural,
        singular: str(names.singular) ?? kind.toLowerCase(),
        namespaced: spec.scope === 'Namespaced',
        shortNames: Array.isArray(names.shortNames) ? names.shortNames.map(String) : [],
        categories: Array.isArray(names.categories) ? names.categories.map(String) : [],
        statusSubresource: sub?.status !== undefined,
        strategicMerge: false,
        listStrategies: {},
        generation: true,
        nameRule: 'subdomain',
        storageKey: `${group}/${plural}`,
        fieldSelectors: [],
        schema,
        deleteReturnsObject: false,
        custom: true,
      };
      return { name: String(v.name), storage: v.storage === true, type };
    });
}
