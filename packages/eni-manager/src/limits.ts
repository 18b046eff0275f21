import { branchLimitsTable } from './branch-limits-table.js';
import type { Ec2Api } from './ec2/client.js';
import { Ec2Fields, invalidEc2Response } from './ec2/response.js';
import { eniError } from './errors.js';
import { instanceLimitsTable } from './instance-limits-table.js';
import { index, instanceType as instanceTypeShape, positive } from './shapes.js';

/** One network card's ENI limit. */
export interface NetworkCardLimit {
  /** `NetworkCardIndex`. */
  readonly index: number;
  /** `MaximumNetworkInterfaces` on this card. */
  readonly maxEnis: number;
}

/** What an instance type allows, from `DescribeInstanceTypes` `NetworkInfo`. */
export interface InstanceLimits {
  /** The instance type. */
  readonly instanceType: string;
  /** ENIs on the default network card (what the max-pods formula uses). */
  readonly maxEnis: number;
  /** `MaximumNetworkInterfaces` across all cards. */
  readonly maxEnisTotal: number;
  /** `Ipv4AddressesPerInterface` (the primary address included). */
  readonly ipv4PerEni: number;
  /** `DefaultNetworkCardIndex`. */
  readonly defaultNetworkCardIndex: number;
  /** Every network card. */
  readonly networkCards: readonly NetworkCardLimit[];
  /** `Hypervisor` (`nitro`, `xen`), or `unknown`. */
  readonly hypervisor: string;
  /** `BareMetal`. */
  readonly bareMetal: boolean;
  /** Prefix delegation works on Nitro and bare-metal types. */
  readonly prefixDelegationSupported: boolean;
}

/** Options for {@link maxPods}. */
export interface MaxPodsOptions {
  /** Custom networking: the primary ENI hosts no pods, so one ENI fewer. */
  readonly customNetworking?: boolean;
  /** Prefix delegation: every secondary slot holds a /28 (16 addresses). */
  readonly prefixDelegation?: boolean;
  /** Upper bound (the reference's calculator recommends 110, or 250 with 30+ vCPUs). */
  readonly cap?: number;
}

/**
 * The reference's max-pods formula (`misc/eni-max-pods.txt`): `ENIs × (IPv4 per ENI − 1) + 2`, on the default
 * network card. m5.large (3 × 10) → 29, c5.xlarge (4 × 15) → 58, t3.small (3 × 4) → 11.
 */
export function maxPods(
  limits: Pick<InstanceLimits, 'maxEnis' | 'ipv4PerEni'>,
  options: MaxPodsOptions = {},
): number {
  const enis = limits.maxEnis - (options.customNetworking === true ? 1 : 0);
  const perEni = (limits.ipv4PerEni - 1) * (options.prefixDelegation === true ? 16 : 1);
  const pods = Math.max(0, enis) * Math.max(0, perEni) + 2;
  return options.cap === undefined ? pods : Math.min(pods, options.cap);
}

/** The limits port: instance limits by type, cached. */
export interface InstanceLimitsSource {
  /** Limits of `instanceType`; throws `InvalidParameterValue` (from EC2) for an unknown type. */
  limits(instanceType: string): Promise<InstanceLimits>;
}

/**
 * The limits the reference publishes for `instanceType` (its generated table, shipped with this package; see
 * `scripts/gen-instance-limits.mjs`), or `undefined` for a type it does not list.
 */
export function publishedInstanceLimits(instanceType: string): InstanceLimits | undefined {
  const row = Object.hasOwn(instanceLimitsTable, instanceType)
    ? instanceLimitsTable[instanceType]
    : undefined;
  if (row === undefined) return undefined;
  const [maxEnisTotal, ipv4PerEni, defaultNetworkCardIndex, hypervisorText, bareMetal, cardPairs] = row;
  const networkCards: NetworkCardLimit[] = [];
  for (let i = 0; i + 1 < cardPairs.length; i += 2)
    networkCards.push({ index: cardPairs[i]!, maxEnis: cardPairs[i + 1]! });
  const defaultCard = networkCards.find((c) => c.index === defaultNetworkCardIndex) ?? networkCards[0];
  const hypervisor = hypervisorText === '' ? 'unknown' : hypervisorText;
  return {
    instanceType,
    maxEnis: defaultCard?.maxEnis ?? maxEnisTotal,
    maxEnisTotal,
    ipv4PerEni,
    defaultNetworkCardIndex,
    networkCards,
    hypervisor,
    bareMetal: bareMetal === 1,
    prefixDelegationSupported: hypervisor === 'nitro' || bareMetal === 1,
  };
}

/**
 * How many branch ENIs one trunk ENI of `instanceType` carries, as the VPC resource controller publishes it (its
 * generated table, shipped with this package; see `scripts/gen-branch-limits.mjs`): `0` for a type that is not
 * trunking-compatible, `undefined` for a type the table does not list. m5.large → 9, c5.xlarge → 18.
 */
export function publishedBranchLimit(instanceType: string): number | undefined {
  return Object.hasOwn(branchLimitsTable, instanceType) ? branchLimitsTable[instanceType] : undefined;
}

/** Options of {@link createInstanceLimitsSource}. */
export interface InstanceLimitsSourceOptions {
  /**
   * Look types up in the reference's published table first ({@link publishedInstanceLimits}), as the reference
   * does; EC2 is asked only for types it does not list. Default false (always ask EC2).
   */
  readonly publishedTable?: boolean;
}

/**
 * An {@link InstanceLimitsSource} over the published table and/or `DescribeInstanceTypes`, caching each type's
 * answer (and sharing one in-flight request between concurrent callers). A failed lookup is not cached. With
 * `ec2` undefined (IMDS-only mode) no EC2 call is ever made: a type missing from the table is
 * `UnknownInstanceType`.
 */
export function createInstanceLimitsSource(
  ec2: Ec2Api | undefined,
  options: InstanceLimitsSourceOptions = {},
): InstanceLimitsSource {
  const cache = new Map<string, Promise<InstanceLimits>>();
  const useTable = options.publishedTable === true || ec2 === undefined;

  async function fetch(instanceType: string): Promise<InstanceLimits> {
    const published = useTable ? publishedInstanceLimits(instanceType) : undefined;
    if (published !== undefined) return published;
    if (ec2 === undefined) {
      throw eniError(
        'UnknownInstanceType',
        `no limits for instance type ${instanceType}: it is not in the shipped table, and EC2 may not be asked (IMDS-only mode)`,
      );
    }
    const out = await ec2.call('DescribeInstanceTypes', { InstanceTypes: [instanceType as never] });
    const types = out.InstanceTypes ?? [];
    const at = types.findIndex((t) => t.InstanceType === instanceType);
    if (at < 0) {
      throw invalidEc2Response('DescribeInstanceTypes', 'InstanceTypes', `no instance type ${instanceType}`);
    }
    const info = types[at]!;
    const f = new Ec2Fields('DescribeInstanceTypes', `InstanceTypes[${at}].NetworkInfo`);
    const net = info.NetworkInfo ?? {};
    const maxEnisTotal = f.required(
      'MaximumNetworkInterfaces',
      net.MaximumNetworkInterfaces,
      positive,
      'a count',
    );
    const ipv4PerEni = f.required(
      'Ipv4AddressesPerInterface',
      net.Ipv4AddressesPerInterface,
      positive,
      'a count',
    );
    const defaultNetworkCardIndex =
      f.optional('DefaultNetworkCardIndex', net.DefaultNetworkCardIndex, index, 'a network card index') ?? 0;
    const networkCards = f.list('NetworkCards', net.NetworkCards, (card, cf) => ({
      index: cf.optional('NetworkCardIndex', card.NetworkCardIndex, index, 'a network card index') ?? 0,
      maxEnis: cf.required('MaximumNetworkInterfaces', card.MaximumNetworkInterfaces, positive, 'a count'),
    }));
    const cards = networkCards.length > 0 ? networkCards : [{ index: 0, maxEnis: maxEnisTotal }];
    const defaultCard = cards.find((c) => c.index === defaultNetworkCardIndex) ?? cards[0]!;
    const hypervisor = info.Hypervisor ? String(info.Hypervisor) : 'unknown';
    const bareMetal = info.BareMetal === true;
    return {
      instanceType,
      maxEnis: defaultCard.maxEnis,
      maxEnisTotal,
      ipv4PerEni,
      defaultNetworkCardIndex,
      networkCards: cards,
      hypervisor,
      bareMetal,
      prefixDelegationSupported: hypervisor === 'nitro' || bareMetal,
    };
  }

  return {
    limits(instanceType: string): Promise<InstanceLimits> {
      if (instanceTypeShape(instanceType) === undefined) {
        return Promise.reject(
          eniError('InvalidInput', `not an instance type: ${JSON.stringify(instanceType)}`),
        );
      }
      let entry = cache.get(instanceType);
      if (entry === undefined) {
        entry = fetch(instanceType);
        cache.set(instanceType, entry);
        entry.catch(() => cache.delete(instanceType));
      }
      return entry;
    },
  };
}
