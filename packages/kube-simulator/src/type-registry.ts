import { BUILTIN_TYPES } from './builtin-types.js';
import { crdVersions } from './crd-registry.js';
import type { KubeObject, ResourceType } from './resource-type.js';

/** The storage key of CustomResourceDefinitions. */
export const CRD_STORAGE_KEY = 'apiextensions.k8s.io/customresourcedefinitions';

/** One API group as discovery lists it. */
export interface ApiGroupInfo {
  /** Group name ('' for core). */
  readonly name: string;
  /** Served versions, preferred first. */
  readonly versions: readonly string[];
}

/**
 * Every resource type currently served: the built-ins plus one entry per served version of each established
 * CRD. Rebuilt from the stored CRDs whenever one changes.
 */
export class TypeRegistry {
  #types: ResourceType[] = [...BUILTIN_TYPES];
  #storageVersion = new Map<string, string>();

  /** Rebuilds the custom types from the stored CRDs. */
  setCrds(crds: readonly KubeObject[]): void {
    const custom: ResourceType[] = [];
    this.#storageVersion.clear();
    for (const crd of crds) {
      if (crd.metadata?.deletionTimestamp) continue;
      for (const v of crdVersions(crd)) {
        custom.push(v.type);
        if (v.storage) this.#storageVersion.set(v.type.storageKey, v.name);
      }
    }
    this.#types = [...BUILTIN_TYPES, ...custom];
  }

  /** The type served at `group/version/plural`, or undefined. */
  find(group: string, version: string, plural: string): ResourceType | undefined {
    return this.#types.find((t) => t.group === group && t.version === version && t.plural === plural);
  }

  /** Types of one group/version (undefined when the group/version is not served). */
  groupVersion(group: string, version: string): ResourceType[] | undefined {
    const list = this.#types.filter((t) => t.group === group && t.version === version);
    return list.length > 0 ? list : undefined;
  }

  /** Served groups in discovery order (built-ins first, then custom groups by name). */
  groups(): ApiGroupInfo[] {
    const out = new Map<string, string[]>();
    for (const t of this.#types) {
      const versions = out.get(t.group) ?? [];
      if (!versions.includes(t.version)) versions.push(t.version);
      out.set(t.group, versions);
    }
    return [...out.entries()].map(([name, versions]) => ({ name, versions: sortVersions(versions) }));
  }

  /** Every served type. */
  all(): readonly ResourceType[] {
    return this.#types;
  }

  /** Every type sharing a storage key (all served versions of one resource). */
  byStorageKey(storageKey: string): ResourceType[] {
    return this.#types.filter((t) => t.storageKey === storageKey);
  }
}

/** Kubernetes version priority: GA > beta > alpha, higher numbers first. */
export function sortVersions(versions: readonly string[]): string[] {
  const rank = (v: string) => {
    const m = v.match(/^v(\d+)(?:(alpha|beta)(\d+))?$/);
    if (!m) return [3, 0, 0, v] as const;
    return [m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2, -Number(m[1]), -Number(m[3] ?? 0), v] as const;
  };
  return [...versions].sort((a, b) => {
    const ra = rank(a);
    const rb = rank(b);
    for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return (ra[i] as number) - (rb[i] as number);
    return ra[3] < rb[3] ? -1 : 1;
  });
}
