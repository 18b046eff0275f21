/**
 * The identifying fields of an AddNetwork or DelNetwork request, checked before anything is assigned, released,
 * logged or counted: whoever writes to the socket, what the daemon keeps in its checkpoint, its log and its
 * metrics' labels stays bounded and well formed.
 */
import { identifierProblem, interfaceNameProblem } from '@vpc-cni-kit/cni-spec';
import { dnsSubdomainProblem } from '../config/kube-names.js';
import type { AddNetworkRequest, DelNetworkRequest } from '../rpc/messages.js';

/** The longest container id, sandbox id, pod UID or network name accepted (runtimes' ids are 64 hex digits). */
export const MAX_IDENTIFIER_LENGTH = 256;

/** The `Reason`s of a DelNetwork the plugins send (the reference's and this one's); a metric label, so a closed set. */
export const DEL_REASONS: ReadonlySet<string> = new Set(['PodDeleted', 'SetupNSFailed']);

/**
 * `value` cut to `max` characters (and `…`): how a refused request's fields are logged and recorded, since until
 * they are checked they may be any size.
 */
export function clipped(value: string, max = MAX_IDENTIFIER_LENGTH): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}

/** A value for a message: quoted, and cut short when long (a request may carry a megabyte in a field). */
function shown(value: string): string {
  return value.length > 64
    ? `${JSON.stringify(value.slice(0, 64))}… (${value.length} characters)`
    : JSON.stringify(value);
}

function identifier(field: string, value: string, required: boolean): string | undefined {
  if (value === '') return required ? `${field} is required` : undefined;
  if (value.length > MAX_IDENTIFIER_LENGTH)
    return `${field} ${shown(value)} is longer than ${MAX_IDENTIFIER_LENGTH} characters`;
  const problem = identifierProblem(value);
  return problem === undefined ? undefined : `${field} ${shown(value)} ${problem}`;
}

function kubeName(field: string, value: string): string | undefined {
  if (value === '') return undefined;
  const problem = dnsSubdomainProblem(value);
  return problem === undefined ? undefined : `${field} ${shown(value)} is not a Kubernetes name: ${problem}`;
}

/**
 * What is wrong with the fields both requests carry, or `undefined`: `ContainerID` and `NetworkName` (required,
 * libcni's identifiers), `IfName` (required, an interface name), the pod's namespace and name (empty outside
 * Kubernetes, else lowercase DNS names), its sandbox id, and the length of `ClientVersion` (compared, and quoted
 * in the refusal of another version).
 */
function commonProblem(req: AddNetworkRequest | DelNetworkRequest): string | undefined {
  const ifname = interfaceNameProblem(req.IfName);
  return (
    identifier('ContainerID', req.ContainerID, true) ??
    identifier('NetworkName', req.NetworkName, true) ??
    (req.IfName === ''
      ? 'IfName is required'
      : ifname === undefined
        ? undefined
        : `IfName ${shown(req.IfName)} is not an interface name: ${ifname}`) ??
    kubeName('K8S_POD_NAMESPACE', req.K8S_POD_NAMESPACE) ??
    kubeName('K8S_POD_NAME', req.K8S_POD_NAME) ??
    identifier('K8S_POD_INFRA_CONTAINER_ID', req.K8S_POD_INFRA_CONTAINER_ID, false) ??
    (req.ClientVersion.length > MAX_IDENTIFIER_LENGTH
      ? `ClientVersion ${shown(req.ClientVersion)} is longer than ${MAX_IDENTIFIER_LENGTH} characters`
      : undefined)
  );
}

/** What is wrong with an AddNetwork request's identifying fields, or `undefined`. */
export function addFieldsProblem(req: AddNetworkRequest): string | undefined {
  return commonProblem(req);
}

/**
 * What is wrong with a DelNetwork request's identifying fields, or `undefined`: those of {@link addFieldsProblem},
 * the pod's UID, and a `Reason` that is empty or one of {@link DEL_REASONS}.
 */
export function delFieldsProblem(req: DelNetworkRequest): string | undefined {
  return (
    commonProblem(req) ??
    identifier('K8S_POD_UID', req.K8S_POD_UID, false) ??
    (req.Reason === '' || DEL_REASONS.has(req.Reason)
      ? undefined
      : `Reason ${shown(req.Reason)} must be one of ${[...DEL_REASONS].join(', ')}`)
  );
}
