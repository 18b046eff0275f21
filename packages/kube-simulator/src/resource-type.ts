import type { JsonSchema } from './schema.js';
import type { StatusCause } from './status.js';
import type { NameRule } from './validation.js';

/** A JSON object as stored and served. */
export type KubeObject = Record<string, unknown> & { metadata?: Record<string, unknown> };

/**
 * How strategic merge patch merges a list at a path (dotted, list indices left out, e.g.
 * `spec.containers.env`): by a key field of its elements, or as a set of primitives.
 */
export type ListStrategy = { readonly mergeKey: string } | { readonly set: true };

/** Converts between a served version and the storage form (e.g. events.k8s.io/v1 ⇄ core v1 Events). */
export interface VersionConverter {
  /** Served form → storage form. */
  toStorage(obj: KubeObject): KubeObject;
  /** Storage form → served form. */
  fromStorage(obj: KubeObject): KubeObject;
}

/** Everything the simulator knows about one served resource (one group/version/plural). */
export interface ResourceType {
  /** API group ('' for core). */
  readonly group: string;
  /** Version served under. */
  readonly version: string;
  /** Kind. */
  readonly kind: string;
  /** Kind of its lists. */
  readonly listKind: string;
  /** Plural (the URL segment). */
  readonly plural: string;
  /** Singular name. */
  readonly singular: string;
  /** Whether objects live in namespaces. */
  readonly namespaced: boolean;
  /** Short names shown in discovery. */
  readonly shortNames: readonly string[];
  /** Categories shown in discovery (e.g. `all`). */
  readonly categories: readonly string[];
  /** Whether `/status` is a subresource (the main resource then ignores status changes). */
  readonly statusSubresource: boolean;
  /** Whether `application/strategic-merge-patch+json` is accepted (built-in types only). */
  readonly strategicMerge: boolean;
  /** List strategies for strategic merge patch, by dotted path. */
  readonly listStrategies: Readonly<Record<string, ListStrategy>>;
  /** Whether `metadata.generation` is kept (bumped on changes outside metadata and status). */
  readonly generation: boolean;
  /** Name validation rule. */
  readonly nameRule: NameRule;
  /** Key of the storage all versions of this resource share (`<group>/<plural>`). */
  readonly storageKey: string;
  /** Field selectors supported besides `metadata.name` and `metadata.namespace`. */
  readonly fieldSelectors: readonly string[];
  /** Top-level fields a built-in type knows (others are pruned); unset when {@link schema} decides. */
  readonly topLevelFields?: readonly string[];
  /** Structural schema of a custom resource (validation, pruning, defaulting). */
  readonly schema?: JsonSchema;
  /** Type-specific validation of a whole object (after defaulting). */
  readonly validate?: (obj: KubeObject, old: KubeObject | undefined) => StatusCause[];
  /** Fills in server-side defaults on create. */
  readonly defaultOnCreate?: (obj: KubeObject) => void;
  /** Version conversion when the storage form differs from the served form. */
  readonly converter?: VersionConverter;
  /** Whether DELETE answers with the object (pods) rather than a Success Status. */
  readonly deleteReturnsObject: boolean;
  /** Whether the type is defined by a CustomResourceDefinition. */
  readonly custom: boolean;
}

/** `<group>/<version>` or `v1` for core. */
export function groupVersion(t: Pick<ResourceType, 'group' | 'version'>): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}
