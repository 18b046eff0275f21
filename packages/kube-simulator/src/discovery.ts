import { groupVersion, type ResourceType } from './resource-type.js';
import type { TypeRegistry } from './type-registry.js';

/** The Kubernetes version the simulator reports at `/version`. */
export const SERVER_VERSION = {
  major: '1',
  minor: '30',
  gitVersion: 'v1.30.0-kube-sim',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.22.0',
  compiler: 'gc',
  platform: 'linux/amd64',
} as const;

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** `/api`: the core versions. */
export function apiVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

/** `/apis`: every named group with its versions. */
export function apiGroupList(registry: TypeRegistry): Record<string, unknown> {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: registry
      .groups()
      .filter((g) => g.name !== '')
      .map((g) => apiGroup(g.name, g.versions)),
  };
}

/** `/apis/<group>`: one group. */
export function apiGroup(name: string, versions: readonly string[]): Record<string, unknown> {
  const list = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { kind: 'APIGroup', apiVersion: 'v1', name, versions: list, preferredVersion: list[0] };
}

/** `/api/v1` or `/apis/<group>/<version>`: the resources of one group/version, with their subresources. */
export function apiResourceList(types: readonly ResourceType[]): Record<string, unknown> {
  const resources: Record<string, unknown>[] = [];
  for (const t of types) {
    resources.push({
      name: t.plural,
      singularName: t.singular,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: VERBS,
      ...(t.shortNames.length > 0 ? { shortNames: t.shortNames } : {}),
      ...(t.categories.length > 0 ? { categories: t.categories } : {}),
    });
    if (t.statusSubresource)
      resources.push({
        name: `${t.plural}/status`,
        singularName: '',
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: ['get', 'patch', 'update'],
      });
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersion(types[0]!), resources };
}
