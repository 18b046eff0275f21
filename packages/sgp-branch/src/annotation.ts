import { cidrContains, cidrNetwork, formatCidr, formatIp, parseCidr, parseIp } from '@vpc-cni-kit/ip-address';
import { formatMac, parseMac } from '@vpc-cni-kit/netlink';
import { SgpError } from './errors.js';

/** The pod annotation the VPC resource controller writes and the daemon reads. */
export const POD_ENI_ANNOTATION = 'vpc.amazonaws.com/pod-eni';

/** The extended resource a branch pod requests (container limits) and a trunk node advertises. */
export const POD_ENI_RESOURCE = 'vpc.amazonaws.com/pod-eni';

/**
 * The description of every branch ENI (the reference controller's `aws-k8s-` + `branch-eni`): with the
 * `node.k8s.amazonaws.com/instance_id` tag it names the branches EC2 holds for one node, associated to its trunk
 * whether their pod is live, not yet plumbed, or gone and in the controller's cooldown.
 */
export const BRANCH_ENI_DESCRIPTION = 'aws-k8s-branch-eni';

/**
 * The tag naming the pod (`<namespace>/<name>`) a branch ENI was created for: written by this project's
 * controller (not the reference's), read by the node to tell a pod's own branch, made and not yet annotated, from
 * the ones that fill its trunk.
 */
export const BRANCH_POD_TAG = 'vpcresources.k8s.aws/pod';

/** The largest VLAN id an 802.1Q tag can carry (ids 1..4094 are usable). */
export const MAX_VLAN_ID = 4094;

/**
 * `value` when it is a usable 802.1Q VLAN id (an integer 1..{@link MAX_VLAN_ID}), else `undefined`: the check
 * the annotation's `vlanId` passes, and the one EC2's trunk association replies are held to.
 */
export function vlanIdOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_VLAN_ID
    ? value
    : undefined;
}

/** One branch ENI of a pod, as the `vpc.amazonaws.com/pod-eni` annotation describes it (validated, canonical). */
export interface BranchEni {
  /** `eni-…` id of the branch ENI. */
  readonly eniId: string;
  /** The branch ENI's MAC, lower case (`ifAddress`). */
  readonly mac: string;
  /** Its primary private IPv4 address (`privateIp`), canonical; absent on IPv6-only branches. */
  readonly ipv4?: string | undefined;
  /** Its IPv6 address (`ipv6Addr`), RFC 5952; absent on IPv4-only branches. */
  readonly ipv6?: string | undefined;
  /** VLAN id on the trunk, 1..4094 (`vlanId`; the daemon reads `vlanID`, JSON keys match case-insensitively). */
  readonly vlanId: number;
  /** The branch's IPv4 subnet in network form (`subnetCidr`), present with {@link BranchEni.ipv4}. */
  readonly subnetCidr?: string | undefined;
  /** The branch's IPv6 subnet in network form (`subnetV6Cidr`), present with {@link BranchEni.ipv6}. */
  readonly subnetV6Cidr?: string | undefined;
  /** The trunk association id (`associationID`), when the controller recorded one. */
  readonly associationId?: string | undefined;
}

/** Options of {@link parsePodEniAnnotation}. */
export interface ParsePodEniOptions {
  /** The address family the node runs (`4` needs `privateIp`+`subnetCidr`, `6` needs the v6 pair). @defaultValue `4` */
  readonly family?: 4 | 6 | undefined;
}

const OP = 'parsePodEniAnnotation';
const FIELDS = [
  'eniId',
  'ifAddress',
  'privateIp',
  'ipv6Addr',
  'vlanId',
  'subnetCidr',
  'subnetV6Cidr',
  'associationID',
] as const;
type Field = (typeof FIELDS)[number];
const BY_LOWER = new Map<string, Field>(FIELDS.map((f) => [f.toLowerCase(), f]));

function bad(detail: string): SgpError {
  return new SgpError({ code: 'ANNOTATION_INVALID', op: OP, detail });
}

function str(raw: Partial<Record<Field, unknown>>, field: Field): string | undefined {
  const v = raw[field];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw bad(`${field} must be a string, got ${JSON.stringify(v)}`);
  return v;
}

function address(raw: Partial<Record<Field, unknown>>, field: Field, family: 4 | 6): string | undefined {
  const text = str(raw, field);
  if (text === undefined) return undefined;
  const a = parseIp(text);
  if (a?.family !== family) throw bad(`${field} is not an IPv${family} address: ${JSON.stringify(text)}`);
  return formatIp(a);
}

function subnet(
  raw: Partial<Record<Field, unknown>>,
  field: Field,
  ip: string | undefined,
  family: 4 | 6,
): string | undefined {
  const text = str(raw, field);
  if (text === undefined) return undefined;
  const c = parseCidr(text);
  if (c?.family !== family) throw bad(`${field} is not an IPv${family} CIDR: ${JSON.stringify(text)}`);
  if (ip !== undefined && !cidrContains(c, parseIp(ip)!)) throw bad(`${ip} is not inside ${field} ${text}`);
  const network = cidrNetwork(c);
  if (family === 4) {
    // A VPC subnet is /16../28; the pod's gateway is its base + 1, which a /0 or /32 would put anywhere.
    if (c.length < 16 || c.length > 28) throw bad(`${field} ${text} is not a VPC subnet (/16 to /28)`);
    // AWS keeps the first four addresses (network, router, DNS, future) and the last of every subnet: a branch
    // with one of them would have the gateway's, or no, address.
    const offset = ip === undefined ? undefined : parseIp(ip)!.value - network.value;
    if (offset !== undefined && (offset < 4n || offset === (1n << BigInt(32 - c.length)) - 1n))
      throw bad(
        `privateIp ${ip} is an address AWS reserves in ${formatCidr(network)} (the first four, the last)`,
      );
  }
  return formatCidr(network);
}

/**
 * Parses and validates the `vpc.amazonaws.com/pod-eni` annotation: a JSON array whose element 0 describes the
 * pod's branch ENI (`eniId`, `ifAddress`, `privateIp`, `ipv6Addr`, `vlanId`, `subnetCidr`, `subnetV6Cidr`,
 * `associationID`). Keys match case-insensitively, as Go's `encoding/json` matches them (the controller writes
 * `vlanId`, the reference daemon reads `vlanID`); unknown keys are ignored. Required: `eniId` (`eni-…`), a
 * unicast MAC, a VLAN id in 1..4094, and the address and subnet of `options.family`, the address inside the
 * subnet; an IPv4 subnet is a VPC subnet's size (/16 to /28) and the address none AWS reserves in it (the first
 * four, the last).
 *
 * Throws {@link SgpError} `ANNOTATION_MISSING` for an absent or empty annotation, `ANNOTATION_INVALID` (detail
 * names the field) for anything else wrong.
 *
 * @example
 * ```ts
 * const branch = parsePodEniAnnotation(
 *   '[{"eniId":"eni-0a1b","ifAddress":"0a:00:00:00:00:07","privateIp":"10.0.1.9","vlanId":3,"subnetCidr":"10.0.0.0/19"}]',
 * );
 * branch.vlanId; // 3
 * ```
 */
export function parsePodEniAnnotation(text: string | undefined, options: ParsePodEniOptions = {}): BranchEni {
  const family = options.family ?? 4;
  if (family !== 4 && family !== 6)
    throw new SgpError({ code: 'INVALID_ARGUMENT', op: OP, detail: `bad family: ${String(family)}` });
  if (text === undefined || text === null || (typeof text === 'string' && text.trim() === '')) {
    throw new SgpError({ code: 'ANNOTATION_MISSING', op: OP, detail: `no ${POD_ENI_ANNOTATION} annotation` });
  }
  if (typeof text !== 'string') throw bad('annotation must be a string');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw bad(`not JSON: ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)}`);
  }
  if (!Array.isArray(parsed)) throw bad('must be a JSON array of branch ENIs');
  if (parsed.length === 0) throw bad('empty array: no branch ENI');
  const first: unknown = parsed[0];
  if (typeof first !== 'object' || first === null || Array.isArray(first))
    throw bad('element 0 must be an object');
  const raw: Partial<Record<Field, unknown>> = {};
  for (const [key, value] of Object.entries(first)) {
    const field = BY_LOWER.get(key.toLowerCase());
    if (field !== undefined) raw[field] = value;
  }

  const eniId = str(raw, 'eniId');
  if (eniId === undefined || !/^eni-[0-9a-f]{1,32}$/.test(eniId))
    throw bad(`eniId must be eni-<hex>: ${JSON.stringify(raw.eniId)}`);
  const macText = str(raw, 'ifAddress');
  const macBytes = macText === undefined ? undefined : parseMac(macText);
  if (!macBytes || macText!.includes('-'))
    throw bad(`ifAddress is not a MAC: ${JSON.stringify(raw.ifAddress)}`);
  // An ENI's MAC is unicast and not zero: anything else is not a branch ENI's, whoever wrote it.
  if ((macBytes[0]! & 1) === 1 || macBytes.every((b) => b === 0))
    throw bad(`ifAddress ${JSON.stringify(macText)} is not a unicast MAC`);
  const vlan = vlanIdOf(raw.vlanId);
  if (vlan === undefined) {
    throw bad(`vlanId must be an integer 1..${MAX_VLAN_ID}: ${JSON.stringify(raw.vlanId)}`);
  }
  const ipv4 = address(raw, 'privateIp', 4);
  const ipv6 = address(raw, 'ipv6Addr', 6);
  const subnetCidr = subnet(raw, 'subnetCidr', ipv4, 4);
  const subnetV6Cidr = subnet(raw, 'subnetV6Cidr', ipv6, 6);
  if (family === 4 && (ipv4 === undefined || subnetCidr === undefined))
    throw bad('an IPv4 node needs privateIp and subnetCidr');
  if (family === 6 && (ipv6 === undefined || subnetV6Cidr === undefined))
    throw bad('an IPv6 node needs ipv6Addr and subnetV6Cidr');
  const associationId = str(raw, 'associationID');
  return {
    eniId,
    mac: formatMac(macBytes),
    vlanId: vlan,
    ...(ipv4 !== undefined ? { ipv4, subnetCidr } : {}),
    ...(ipv6 !== undefined ? { ipv6, subnetV6Cidr } : {}),
    ...(associationId !== undefined ? { associationId } : {}),
  };
}

/**
 * Renders the annotation value for one branch ENI, in the controller's key spelling (`vlanId`), omitting absent
 * fields. `parsePodEniAnnotation(formatPodEniAnnotation(b))` returns `b`.
 */
export function formatPodEniAnnotation(branch: BranchEni): string {
  const entry: Record<string, string | number> = { eniId: branch.eniId, ifAddress: branch.mac };
  if (branch.ipv4 !== undefined) entry.privateIp = branch.ipv4;
  if (branch.ipv6 !== undefined) entry.ipv6Addr = branch.ipv6;
  entry.vlanId = branch.vlanId;
  if (branch.subnetCidr !== undefined) entry.subnetCidr = branch.subnetCidr;
  if (branch.subnetV6Cidr !== undefined) entry.subnetV6Cidr = branch.subnetV6Cidr;
  if (branch.associationId !== undefined) entry.associationID = branch.associationId;
  return JSON.stringify([entry]);
}
