import { eniError } from '../errors.js';
import {
  awsId,
  decimal,
  instanceType as instanceTypeShape,
  ipv4,
  ipv4Cidr,
  ipv4Prefix,
  ipv6,
  ipv6Cidr,
  ipv6Prefix,
  mac as macShape,
  region as regionShape,
  zone,
} from '../shapes.js';
import type { ImdsClient } from './client.js';
import type { ImdsEni, NodeInfo } from './node-info.js';

/**
 * The node-metadata port: what the rest of the daemon needs from IMDS. Implemented over IMDSv2 by
 * {@link createImdsNodeMetadata}; every value is validated, and a malformed one is an `ImdsInvalidResponse`.
 */
export interface NodeMetadata {
  /** Instance identity, placement and every attached ENI. */
  discoverNode(): Promise<NodeInfo>;
  /** The MACs IMDS lists under `network/interfaces/macs/`. */
  listMacs(): Promise<string[]>;
  /** One ENI by MAC; `undefined` when IMDS does not (yet) list it. */
  readEni(mac: string): Promise<ImdsEni | undefined>;
  /** Every attached ENI, ordered by network card, then device number. */
  listEnis(): Promise<ImdsEni[]>;
}

function invalid(path: string, value: string, what: string): never {
  throw eniError(
    'ImdsInvalidResponse',
    `IMDS meta-data/${path} is not ${what}: ${JSON.stringify(value.slice(0, 80))}`,
    {
      action: path,
    },
  );
}

function checked<T>(path: string, value: string, check: (v: string) => T | undefined, what: string): T {
  const result = check(value.trim());
  return result === undefined ? invalid(path, value, what) : result;
}

/** A {@link NodeMetadata} reading IMDS through `imds`. */
export function createImdsNodeMetadata(imds: ImdsClient): NodeMetadata {
  const text = async (path: string, check: (v: string) => string | undefined, what: string) =>
    checked(path, await imds.get(path), check, what);
  const list = async (path: string, check: (v: string) => string | undefined, what: string) =>
    (await imds.lines(path)).map((line) => checked(path, line, check, what));

  async function listMacs(): Promise<string[]> {
    const path = 'network/interfaces/macs/';
    const entries = await imds.lines(path);
    return entries.map((entry) => checked(path, entry.replace(/\/$/, ''), macShape, 'a MAC address'));
  }

  async function readEni(mac: string): Promise<ImdsEni | undefined> {
    if (macShape(mac) === undefined)
      throw eniError('InvalidInput', `not a MAC address: ${JSON.stringify(mac)}`);
    const base = `network/interfaces/macs/${mac}/`;
    const fields = new Set((await imds.lines(base)).map((f) => f.replace(/\/$/, '')));
    if (fields.size === 0) return undefined;
    // IPv6 blocks only where the listing names them (most nodes have none: no 404 round trips).
    const optionalList = (field: string) =>
      fields.has(field) ? list(`${base}${field}`, ipv6Cidr, 'an IPv6 CIDR') : Promise.resolve([]);
    const [eniId, device, card, subnetId, subnetCidr, vpcId, vpcCidrs, groups, v4, v4p, v6, v6p, sub6, vpc6] =
      await Promise.all([
        text(`${base}interface-id`, (v) => awsId('eni', v), 'an ENI id'),
        imds.get(`${base}device-number`),
        imds.getOptional(`${base}network-card`),
        text(`${base}subnet-id`, (v) => awsId('subnet', v), 'a subnet id'),
        text(`${base}subnet-ipv4-cidr-block`, ipv4Cidr, 'an IPv4 CIDR'),
        text(`${base}vpc-id`, (v) => awsId('vpc', v), 'a VPC id'),
        list(`${base}vpc-ipv4-cidr-blocks`, ipv4Cidr, 'an IPv4 CIDR'),
        list(`${base}security-group-ids`, (v) => awsId('sg', v), 'a security group id'),
        list(`${base}local-ipv4s`, ipv4, 'an IPv4 address'),
        list(`${base}ipv4-prefix`, ipv4Prefix, 'an IPv4 /28 prefix'),
        list(`${base}ipv6s`, ipv6, 'an IPv6 address'),
        list(`${base}ipv6-prefix`, ipv6Prefix, 'an IPv6 /80 prefix'),
        optionalList('subnet-ipv6-cidr-blocks'),
        optionalList('vpc-ipv6-cidr-blocks'),
      ]);
    return {
      mac,
      eniId,
      deviceNumber: checked(`${base}device-number`, device, decimal, 'a device number'),
      networkCard:
        card === undefined ? 0 : checked(`${base}network-card`, card, decimal, 'a network card index'),
      subnetId,
      subnetIpv4Cidr: subnetCidr,
      vpcId,
      vpcIpv4Cidrs: vpcCidrs,
      securityGroupIds: groups,
      ipv4Addresses: v4,
      ipv4Prefixes: v4p,
      ipv6Addresses: v6,
      ipv6Prefixes: v6p,
      subnetIpv6Cidrs: sub6,
      vpcIpv6Cidrs: vpc6,
    };
  }

  async function listEnis(): Promise<ImdsEni[]> {
    const macs = await listMacs();
    const enis = await Promise.all(macs.map((m) => readEni(m)));
    return enis
      .filter((e): e is ImdsEni => e !== undefined)
      .sort((a, b) => a.networkCard - b.networkCard || a.deviceNumber - b.deviceNumber);
  }

  async function discoverNode(): Promise<NodeInfo> {
    const [instanceId, instanceType, availabilityZone, region, localIpv4, localIpv6, primaryMac, enis] =
      await Promise.all([
        text('instance-id', (v) => awsId('i', v), 'an instance id'),
        text('instance-type', instanceTypeShape, 'an instance type'),
        text('placement/availability-zone', zone, 'a zone'),
        imds.getOptional('placement/region'),
        text('local-ipv4', ipv4, 'an IPv4 address'),
        imds.getOptional('ipv6'),
        text('mac', macShape, 'a MAC address'),
        listEnis(),
      ]);
    const primaryEni = enis.find((e) => e.mac === primaryMac);
    if (primaryEni === undefined) {
      throw eniError('ImdsInvalidResponse', `IMDS lists no interface for the primary MAC ${primaryMac}`, {
        action: 'network/interfaces/macs/',
      });
    }
    const regionName =
      region === undefined
        ? availabilityZone.slice(0, -1)
        : checked('placement/region', region, regionShape, 'a region');
    return {
      instanceId,
      instanceType,
      availabilityZone,
      region: regionName,
      localIpv4,
      localIpv6: localIpv6 === undefined ? undefined : checked('ipv6', localIpv6, ipv6, 'an IPv6 address'),
      primaryMac,
      primaryEni,
      enis,
    };
  }

  return { discoverNode, listMacs, readEni, listEnis };
}
