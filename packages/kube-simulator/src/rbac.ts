import { asRecord } from './builtin-types.js';
import type { KubeObject } from './resource-type.js';
import { KubeApiError } from './status.js';

/** Who is calling. */
export interface UserInfo {
  /** User name (`system:serviceaccount:<ns>:<name>` for service accounts). */
  readonly name: string;
  /** Groups. */
  readonly groups: readonly string[];
}

/** What a request wants to do, in RBAC terms. */
export type RequestAttributes =
  | {
      readonly resourceRequest: true;
      /** get, list, watch, create, update, patch, delete, deletecollection. */
      readonly verb: string;
      readonly apiGroup: string;
      readonly resource: string;
      readonly subresource: string;
      readonly namespace: string;
      readonly name: string;
    }
  | { readonly resourceRequest: false; readonly verb: string; readonly path: string };

/** Reads the RBAC objects the authorizer consults. */
export interface RbacSource {
  /** All objects of an RBAC resource (`roles`, `clusterroles`, `rolebindings`, `clusterrolebindings`). */
  list(
    resource: 'roles' | 'clusterroles' | 'rolebindings' | 'clusterrolebindings',
    namespace?: string,
  ): readonly KubeObject[];
}

/** Paths every authenticated user may GET (the real `system:discovery` and `system:public-info-viewer`). */
const DISCOVERY_PATHS = [
  '/api',
  '/api/*',
  '/apis',
  '/apis/*',
  '/version',
  '/version/',
  '/openapi',
  '/openapi/*',
  '/healthz',
  '/livez',
  '/readyz',
];

function matchesOne(list: unknown, value: string): boolean {
  return Array.isArray(list) && list.some((v) => v === '*' || v === value);
}

function pathMatches(list: unknown, path: string): boolean {
  return (
    Array.isArray(list) &&
    list.some(
      (p) =>
        typeof p === 'string' &&
        (p === '*' || p === path || (p.endsWith('*') && path.startsWith(p.slice(0, -1)))),
    )
  );
}

function ruleAllows(rule: Record<string, unknown>, a: RequestAttributes): boolean {
  if (!matchesOne(rule.verbs, a.verb)) return false;
  if (!a.resourceRequest) return pathMatches(rule.nonResourceURLs, a.path);
  if (!matchesOne(rule.apiGroups, a.apiGroup)) return false;
  const full = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const resources = rule.resources;
  const resourceOk =
    Array.isArray(resources) &&
    resources.some((r) => r === '*' || r === full || (a.subresource !== '' && r === `*/${a.subresource}`));
  if (!resourceOk) return false;
  const names = rule.resourceNames;
  if (Array.isArray(names) && names.length > 0) return a.name !== '' && names.includes(a.name);
  return true;
}

function subjectMatches(subject: Record<string, unknown>, user: UserInfo, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === user.name;
    case 'Group':
      return typeof subject.name === 'string' && user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const ns = (subject.namespace as string | undefined) || bindingNamespace;
      return user.name === `system:serviceaccount:${ns}:${subject.name as string}`;
    }
    default:
      return false;
  }
}

function rulesOf(role: KubeObject | undefined): Record<string, unknown>[] {
  const rules = role?.rules;
  return Array.isArray(rules) ? (rules.map(asRecord).filter(Boolean) as Record<string, unknown>[]) : [];
}

/**
 * Decides a request from the Roles, ClusterRoles and bindings in the store, as the real RBAC authorizer does:
 * allow if any rule of any role bound to the user (cluster-wide, or in the request's namespace) matches.
 * `system:masters` may do everything; every authenticated user may read discovery paths.
 */
export function authorize(source: RbacSource, user: UserInfo, a: RequestAttributes): boolean {
  if (user.groups.includes('system:masters')) return true;
  if (!a.resourceRequest && a.verb === 'get' && pathMatches(DISCOVERY_PATHS, a.path)) return true;
  const clusterRoles = new Map(source.list('clusterroles').map((r) => [r.metadata?.name as string, r]));
  for (const b of source.list('clusterrolebindings')) {
    const subjects = Array.isArray(b.subjects) ? b.subjects : [];
    if (!subjects.some((s) => asRecord(s) && subjectMatches(asRecord(s)!, user, ''))) continue;
    const ref = asRecord(b.roleRef);
    if (ref?.kind !== 'ClusterRole') continue;
    if (rulesOf(clusterRoles.get(ref.name as string)).some((r) => ruleAllows(r, a))) return true;
  }
  if (a.resourceRequest && a.namespace !== '') {
    const roles = new Map(source.list('roles', a.namespace).map((r) => [r.metadata?.name as string, r]));
    for (const b of source.list('rolebindings', a.namespace)) {
      const subjects = Array.isArray(b.subjects) ? b.subjects : [];
      if (!subjects.some((s) => asRecord(s) && subjectMatches(asRecord(s)!, user, a.namespace))) continue;
      const ref = asRecord(b.roleRef);
      const role =
        ref?.kind === 'Role'
          ? roles.get(ref.name as string)
          : ref?.kind === 'ClusterRole'
            ? clusterRoles.get(ref.name as string)
            : undefined;
      if (rulesOf(role).some((r) => ruleAllows(r, a))) return true;
    }
  }
  return false;
}

/** The 403 Forbidden error, worded like the real API server's. */
export function forbidden(user: UserInfo, a: RequestAttributes): KubeApiError {
  if (!a.resourceRequest)
    return new KubeApiError(
      403,
      'Forbidden',
      `forbidden: User "${user.name}" cannot ${a.verb} path "${a.path}"`,
      {},
    );
  const qualified = a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource;
  const what = a.name ? `${qualified} "${a.name}"` : qualified;
  const full = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  return new KubeApiError(
    403,
    'Forbidden',
    `${what} is forbidden: User "${user.name}" cannot ${a.verb} resource "${full}" in API group "${a.apiGroup}" ${scope}`,
    { ...(a.name ? { name: a.name } : {}), ...(a.apiGroup ? { group: a.apiGroup } : {}), kind: a.resource },
  );
}
