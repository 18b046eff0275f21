import { readFile } from 'node:fs/promises';
import { ScenarioError } from './errors.js';
import { INSTANCE_TYPES, type InstanceTypeSpec } from './instance-types.js';
import { type Ipv4Cidr, ipv4Overlaps, ipv4Within, parseIpv4, parseIpv4Cidr, parseIpv6Cidr } from './ip.js';

/** A validated scenario with its defaults filled in. */
export interface ResolvedScenario extends Scenario {
  /** Region (defaulted). */
  readonly region: string;
  /** Account id (defaulted). */
  readonly accountId: string;
}

/** A VPC in a scenario. */
export interface ScenarioVpc {
  /** `vpc-…` */
  readonly id: string;
  /** IPv4 CIDR blocks (/16–/28), primary first. */
  readonly cidrBlocks: readonly string[];
  /** Optional IPv6 /56. */
  readonly ipv6CidrBlock?: string;
}

/** A subnet in a scenario. */
export interface ScenarioSubnet {
  /** `subnet-…` */
  readonly id: string;
  /** Owning VPC (default: the only VPC). */
  readonly vpcId?: string;
  /** IPv4 CIDR (/16–/28) inside one of the VPC's blocks. */
  readonly cidrBlock: string;
  /** Optional IPv6 /64. */
  readonly ipv6CidrBlock?: string;
  /** AZ, e.g. `us-west-2a` (default: region + `a`). */
  readonly availabilityZone?: string;
  /** Tags, e.g. `{"kubernetes.io/role/cni": "1"}`. */
  readonly tags?: Readonly<Record<string, string>>;
}

/** A security group in a scenario. Every VPC also gets a group named `default` unless one is given. */
export interface ScenarioSecurityGroup {
  /** `sg-…` */
  readonly id: string;
  /** Name. */
  readonly name: string;
  /** VPC (default: the only VPC). */
  readonly vpcId?: string;
  /** Description. */
  readonly description?: string;
  /** Tags. */
  readonly tags?: Readonly<Record<string, string>>;
  /** Inbound rules (default: none; a group named `default` also admits its own members). */
  readonly ingress?: readonly ScenarioRule[];
  /** Outbound rules (default: everything to 0.0.0.0/0, as EC2 gives a new group). */
  readonly egress?: readonly ScenarioRule[];
}

/** A security group rule in a scenario: one peer (a CIDR or a group of the same VPC), protocol and ports. */
export interface ScenarioRule {
  /** `tcp`, `udp`, `icmp`, `-1` (all) or a protocol number. */
  readonly ipProtocol: string;
  /** First port (ICMP: type). */
  readonly fromPort?: number;
  /** Last port (ICMP: code). */
  readonly toPort?: number;
  /** Peer CIDR. */
  readonly cidrIpv4?: string;
  /** Peer security group (declared in the scenario). */
  readonly referencedGroupId?: string;
  /** Description. */
  readonly description?: string;
}

/** An instance in a scenario. */
export interface ScenarioInstance {
  /** `i-…` (generated when absent). */
  readonly id?: string;
  /** A type from the built-in table (see `INSTANCE_TYPES`). */
  readonly instanceType: string;
  /** Subnet of the primary interface. */
  readonly subnetId: string;
  /** Groups of the primary interface (default: the VPC's default group). */
  readonly securityGroupIds?: readonly string[];
  /** Primary private IPv4 address (default: the first free one). */
  readonly privateIpAddress?: string;
  /**
   * IPv6 addresses on the primary interface, 0–1 (default 0; the subnet needs an IPv6 CIDR). An EKS IPv6 node
   * has one: IMDS `ipv6` and the address its eth0 carries.
   */
  readonly ipv6AddressCount?: number;
  /** Tags. */
  readonly tags?: Readonly<Record<string, string>>;
}

/** The world the simulator starts with. */
export interface Scenario {
  /** Region (default `us-west-2`). */
  readonly region?: string;
  /** Account id (default `123456789012`). */
  readonly accountId?: string;
  /** VPCs. */
  readonly vpcs: readonly ScenarioVpc[];
  /** Subnets. */
  readonly subnets: readonly ScenarioSubnet[];
  /** Security groups. */
  readonly securityGroups?: readonly ScenarioSecurityGroup[];
  /** Instances. */
  readonly instances?: readonly ScenarioInstance[];
  /** Instance types added to (or replacing rows of) the built-in table, e.g. a trunking-compatible type. */
  readonly instanceTypes?: readonly InstanceTypeSpec[];
}

const ID = (prefix: string) => new RegExp(`^${prefix}-[0-9a-f]{8,17}$`);
const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function invalid(path: string, message: string): never {
  throw new ScenarioError('SCENARIO_INVALID', path, message);
}

function str(
  o: Record<string, unknown>,
  key: string,
  path: string,
  optional = false,
  allowEmpty = false,
): string | undefined {
  const v = o[key];
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'string' || (v === '' && !allowEmpty))
    invalid(`${path}.${key}`, 'must be a non-empty string');
  return v;
}

function arr(o: Record<string, unknown>, key: string, path: string, optional = false): unknown[] {
  const v = o[key];
  if (v === undefined && optional) return [];
  if (!Array.isArray(v)) invalid(`${path}.${key}`, 'must be an array');
  return v;
}

function tags(o: Record<string, unknown>, path: string): Record<string, string> | undefined {
  const v = o['tags'];
  if (v === undefined) return undefined;
  if (!isObj(v)) invalid(`${path}.tags`, 'must be an object of strings');
  for (const [k, t] of Object.entries(v)) {
    if (typeof t !== 'string' || k === '' || k.length > 128 || t.length > 256) {
      invalid(`${path}.tags.${k}`, 'tag keys must be 1–128 characters and values strings up to 256');
    }
  }
  return v as Record<string, string>;
}

function only(o: Record<string, unknown>, keys: readonly string[], path: string): void {
  for (const k of Object.keys(o)) if (!keys.includes(k)) invalid(`${path}.${k}`, 'unknown field');
}

/** One declared instance type: a name and one card's limits (1–64 interfaces, 1–50 addresses each). */
function scenarioInstanceType(t: unknown, p: string): InstanceTypeSpec {
  if (!isObj(t)) invalid(p, 'must be an object');
  only(
    t,
    [
      'name',
      'maximumNetworkInterfaces',
      'ipv4AddressesPerInterface',
      'ipv6AddressesPerInterface',
      'branchInterfaces',
      'hypervisor',
      'networkPerformance',
    ],
    p,
  );
  const int = (k: string, min: number, max: number, optional = false): number | undefined => {
    const v = t[k];
    if (v === undefined && optional) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      invalid(`${p}.${k}`, `must be an integer from ${min} to ${max}`);
    }
    return v;
  };
  const name = str(t, 'name', p)!;
  if (!/^[a-z0-9-]+\.[a-z0-9-]+$/.test(name)) invalid(`${p}.name`, 'must look like m5.large');
  const hypervisor = str(t, 'hypervisor', p, true);
  if (hypervisor !== undefined && hypervisor !== 'nitro' && hypervisor !== 'xen') {
    invalid(`${p}.hypervisor`, "must be 'nitro' or 'xen'");
  }
  const ipv6 = int('ipv6AddressesPerInterface', 1, 50, true);
  const branches = int('branchInterfaces', 0, 120, true);
  const perf = str(t, 'networkPerformance', p, true);
  return {
    name,
    maximumNetworkInterfaces: int('maximumNetworkInterfaces', 1, 64)!,
    ipv4AddressesPerInterface: int('ipv4AddressesPerInterface', 1, 50)!,
    ...(ipv6 !== undefined ? { ipv6AddressesPerInterface: ipv6 } : {}),
    ...(branches !== undefined ? { branchInterfaces: branches } : {}),
    ...(hypervisor !== undefined ? { hypervisor } : {}),
    ...(perf !== undefined ? { networkPerformance: perf } : {}),
  };
}

/** The shape of one rule (its meaning is checked by the simulator as AuthorizeSecurityGroup* would). */
function scenarioRule(r: unknown, p: string): ScenarioRule {
  if (!isObj(r)) invalid(p, 'must be an object');
  only(r, ['ipProtocol', 'fromPort', 'toPort', 'cidrIpv4', 'referencedGroupId', 'description'], p);
  const int = (k: string): number | undefined => {
    const v = r[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < -1 || v > 65535) {
      invalid(`${p}.${k}`, 'must be an integer from -1 to 65535');
    }
    return v;
  };
  const cidr = str(r, 'cidrIpv4', p, true);
  const ref = str(r, 'referencedGroupId', p, true);
  if ((cidr === undefined) === (ref === undefined)) {
    invalid(p, 'give exactly one of cidrIpv4 and referencedGroupId');
  }
  const fromPort = int('fromPort');
  const toPort = int('toPort');
  const description = str(r, 'description', p, true, true);
  return {
    ipProtocol: str(r, 'ipProtocol', p)!,
    ...(fromPort !== undefined ? { fromPort } : {}),
    ...(toPort !== undefined ? { toPort } : {}),
    ...(cidr !== undefined ? { cidrIpv4: cidr } : {}),
    ...(ref !== undefined ? { referencedGroupId: ref } : {}),
    ...(description !== undefined ? { description } : {}),
  };
}

/**
 * Validates an untrusted scenario (for example parsed JSON) and fills in defaults. Throws a
 * {@link ScenarioError} naming the offending field.
 */
export function parseScenario(input: unknown): ResolvedScenario {
  if (!isObj(input)) invalid('', 'a scenario must be a JSON object');
  only(input, ['region', 'accountId', 'vpcs', 'subnets', 'securityGroups', 'instances', 'instanceTypes'], '');
  const instanceTypes = arr(input, 'instanceTypes', '', true).map((t, i) =>
    scenarioInstanceType(t, `instanceTypes[${i}]`),
  );
  const typeNames = new Set([...INSTANCE_TYPES.keys(), ...instanceTypes.map((t) => t.name)]);
  const region = str(input, 'region', '', true) ?? 'us-west-2';
  if (!/^[a-z]{2}(-[a-z]+)+-\d$/.test(region)) invalid('region', 'must look like us-west-2');
  const accountId = str(input, 'accountId', '', true) ?? '123456789012';
  if (!/^\d{12}$/.test(accountId)) invalid('accountId', 'must be 12 digits');
  const seen = new Set<string>();
  const unique = (id: string, path: string) => {
    if (seen.has(id)) throw new ScenarioError('SCENARIO_DUPLICATE_ID', path, `duplicate id ${id}`);
    seen.add(id);
  };

  const vpcCidrs = new Map<string, Ipv4Cidr[]>();
  const vpcs: ScenarioVpc[] = arr(input, 'vpcs', '').map((v, i) => {
    const p = `vpcs[${i}]`;
    if (!isObj(v)) invalid(p, 'must be an object');
    only(v, ['id', 'cidrBlocks', 'ipv6CidrBlock'], p);
    const id = str(v, 'id', p)!;
    if (!ID('vpc').test(id)) invalid(`${p}.id`, 'must look like vpc-0123456789abcdef0');
    unique(id, `${p}.id`);
    const blocks = arr(v, 'cidrBlocks', p);
    if (blocks.length === 0 || blocks.length > 5) invalid(`${p}.cidrBlocks`, 'must hold 1–5 CIDR blocks');
    const parsed = blocks.map((b, j) => {
      const c = typeof b === 'string' ? parseIpv4Cidr(b) : undefined;
      if (!c || c.length < 16 || c.length > 28)
        invalid(`${p}.cidrBlocks[${j}]`, 'must be an IPv4 CIDR from /16 to /28');
      return c;
    });
    for (let a = 0; a < parsed.length; a++) {
      for (let b = a + 1; b < parsed.length; b++) {
        if (ipv4Overlaps(parsed[a]!, parsed[b]!)) {
          throw new ScenarioError(
            'SCENARIO_CIDR_CONFLICT',
            `${p}.cidrBlocks[${b}]`,
            'overlaps another block',
          );
        }
      }
    }
    vpcCidrs.set(id, parsed);
    const v6 = str(v, 'ipv6CidrBlock', p, true);
    if (v6 !== undefined && parseIpv6Cidr(v6)?.length !== 56)
      invalid(`${p}.ipv6CidrBlock`, 'must be an IPv6 /56');
    return { id, cidrBlocks: blocks as string[], ...(v6 !== undefined ? { ipv6CidrBlock: v6 } : {}) };
  });
  if (vpcs.length === 0) invalid('vpcs', 'needs at least one VPC');
  const defaultVpc = (o: Record<string, unknown>, p: string): string => {
    const id = str(o, 'vpcId', p, true);
    if (id === undefined) {
      if (vpcs.length !== 1) invalid(`${p}.vpcId`, 'required when there is more than one VPC');
      return vpcs[0]!.id;
    }
    if (!vpcCidrs.has(id))
      throw new ScenarioError('SCENARIO_UNKNOWN_REFERENCE', `${p}.vpcId`, `no VPC ${id}`);
    return id;
  };

  const subnetCidrs: { c: Ipv4Cidr; path: string }[] = [];
  const subnetVpc = new Map<string, string>();
  const subnets: ScenarioSubnet[] = arr(input, 'subnets', '').map((s, i) => {
    const p = `subnets[${i}]`;
    if (!isObj(s)) invalid(p, 'must be an object');
    only(s, ['id', 'vpcId', 'cidrBlock', 'ipv6CidrBlock', 'availabilityZone', 'tags'], p);
    const id = str(s, 'id', p)!;
    if (!ID('subnet').test(id)) invalid(`${p}.id`, 'must look like subnet-0123456789abcdef0');
    unique(id, `${p}.id`);
    const vpcId = defaultVpc(s, p);
    const cidrText = str(s, 'cidrBlock', p)!;
    const c = parseIpv4Cidr(cidrText);
    if (!c || c.length < 16 || c.length > 28)
      invalid(`${p}.cidrBlock`, 'must be an IPv4 CIDR from /16 to /28');
    if (!vpcCidrs.get(vpcId)!.some((v) => ipv4Within(c, v))) {
      throw new ScenarioError(
        'SCENARIO_CIDR_CONFLICT',
        `${p}.cidrBlock`,
        `not inside any CIDR block of ${vpcId}`,
      );
    }
    const clash = subnetCidrs.find((o) => ipv4Overlaps(o.c, c));
    if (clash) throw new ScenarioError('SCENARIO_CIDR_CONFLICT', `${p}.cidrBlock`, `overlaps ${clash.path}`);
    subnetCidrs.push({ c, path: p });
    const v6 = str(s, 'ipv6CidrBlock', p, true);
    if (v6 !== undefined && parseIpv6Cidr(v6)?.length !== 64)
      invalid(`${p}.ipv6CidrBlock`, 'must be an IPv6 /64');
    const az = str(s, 'availabilityZone', p, true) ?? `${region}a`;
    if (!az.startsWith(region) || !/^[a-z]$/.test(az.slice(region.length))) {
      invalid(`${p}.availabilityZone`, `must be a zone of ${region}, e.g. ${region}a`);
    }
    const t = tags(s, p);
    subnetVpc.set(id, vpcId);
    return {
      id,
      vpcId,
      cidrBlock: cidrText,
      availabilityZone: az,
      ...(v6 !== undefined ? { ipv6CidrBlock: v6 } : {}),
      ...(t ? { tags: t } : {}),
    };
  });

  const groupVpc = new Map<string, string>();
  const securityGroups: ScenarioSecurityGroup[] = arr(input, 'securityGroups', '', true).map((g, i) => {
    const p = `securityGroups[${i}]`;
    if (!isObj(g)) invalid(p, 'must be an object');
    only(g, ['id', 'name', 'vpcId', 'description', 'tags', 'ingress', 'egress'], p);
    const id = str(g, 'id', p)!;
    if (!ID('sg').test(id)) invalid(`${p}.id`, 'must look like sg-0123456789abcdef0');
    unique(id, `${p}.id`);
    const vpcId = defaultVpc(g, p);
    groupVpc.set(id, vpcId);
    const t = tags(g, p);
    const rules = (key: 'ingress' | 'egress') =>
      g[key] === undefined
        ? {}
        : { [key]: arr(g, key, p).map((r, j) => scenarioRule(r, `${p}.${key}[${j}]`)) };
    return {
      id,
      name: str(g, 'name', p)!,
      vpcId,
      description: str(g, 'description', p, true, true) ?? '',
      ...(t ? { tags: t } : {}),
      ...rules('ingress'),
      ...rules('egress'),
    };
  });
  for (const [i, g] of securityGroups.entries()) {
    for (const key of ['ingress', 'egress'] as const) {
      for (const [j, r] of (g[key] ?? []).entries()) {
        if (r.referencedGroupId !== undefined && groupVpc.get(r.referencedGroupId) !== g.vpcId) {
          throw new ScenarioError(
            'SCENARIO_UNKNOWN_REFERENCE',
            `securityGroups[${i}].${key}[${j}].referencedGroupId`,
            `no security group ${r.referencedGroupId} in ${g.vpcId}`,
          );
        }
      }
    }
  }

  const instances: ScenarioInstance[] = arr(input, 'instances', '', true).map((x, i) => {
    const p = `instances[${i}]`;
    if (!isObj(x)) invalid(p, 'must be an object');
    only(
      x,
      ['id', 'instanceType', 'subnetId', 'securityGroupIds', 'privateIpAddress', 'ipv6AddressCount', 'tags'],
      p,
    );
    const id = str(x, 'id', p, true);
    if (id !== undefined) {
      if (!ID('i').test(id)) invalid(`${p}.id`, 'must look like i-0123456789abcdef0');
      unique(id, `${p}.id`);
    }
    const instanceType = str(x, 'instanceType', p)!;
    if (!typeNames.has(instanceType)) {
      invalid(`${p}.instanceType`, `unknown type; known: ${[...typeNames].join(', ')}`);
    }
    const subnetId = str(x, 'subnetId', p)!;
    const vpcId = subnetVpc.get(subnetId);
    if (!vpcId)
      throw new ScenarioError('SCENARIO_UNKNOWN_REFERENCE', `${p}.subnetId`, `no subnet ${subnetId}`);
    const sgs = arr(x, 'securityGroupIds', p, true).map((g, j) => {
      if (typeof g !== 'string' || groupVpc.get(g) !== vpcId) {
        throw new ScenarioError(
          'SCENARIO_UNKNOWN_REFERENCE',
          `${p}.securityGroupIds[${j}]`,
          `no security group ${String(g)} in ${vpcId}`,
        );
      }
      return g;
    });
    const ip = str(x, 'privateIpAddress', p, true);
    if (ip !== undefined) {
      const n = parseIpv4(ip);
      const sn = subnetCidrs[subnets.findIndex((s) => s.id === subnetId)]!.c;
      const off = n === undefined ? -1 : n - sn.base;
      if (n === undefined || off < 4 || off >= 2 ** (32 - sn.length) - 1) {
        invalid(`${p}.privateIpAddress`, `must be a usable address of ${subnetId}`);
      }
    }
    const v6Count = x['ipv6AddressCount'];
    if (v6Count !== undefined) {
      if (v6Count !== 0 && v6Count !== 1) invalid(`${p}.ipv6AddressCount`, 'must be 0 or 1');
      if (v6Count === 1 && subnets.find((s) => s.id === subnetId)?.ipv6CidrBlock === undefined)
        invalid(`${p}.ipv6AddressCount`, `${subnetId} has no IPv6 CIDR`);
    }
    const t = tags(x, p);
    return {
      instanceType,
      subnetId,
      securityGroupIds: sgs,
      ...(id !== undefined ? { id } : {}),
      ...(ip !== undefined ? { privateIpAddress: ip } : {}),
      ...(v6Count === 1 ? { ipv6AddressCount: 1 } : {}),
      ...(t ? { tags: t } : {}),
    };
  });
  const ips = instances.filter((x) => x.privateIpAddress !== undefined).map((x) => x.privateIpAddress!);
  const dup = ips.find((ip, i) => ips.indexOf(ip) !== i);
  if (dup) throw new ScenarioError('SCENARIO_DUPLICATE_ID', 'instances', `address ${dup} used twice`);
  return {
    region,
    accountId,
    vpcs,
    subnets,
    securityGroups,
    instances,
    ...(instanceTypes.length > 0 ? { instanceTypes } : {}),
  };
}

/** Reads and validates a scenario JSON file. */
export async function loadScenarioFile(path: string): Promise<ResolvedScenario> {
  let textContent: string;
  try {
    textContent = await readFile(path, 'utf8');
  } catch (e) {
    throw new ScenarioError('SCENARIO_UNREADABLE', '', `cannot read ${path}: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(textContent);
  } catch (e) {
    throw new ScenarioError('SCENARIO_NOT_JSON', '', `${path} is not JSON: ${(e as Error).message}`);
  }
  return parseScenario(json);
}
