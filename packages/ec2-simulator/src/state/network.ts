import { Ipv4Pool, Ipv6Pool } from '../address-pool.js';
import { Ec2SimError } from '../errors.js';
import { parseIpv4Cidr, parseIpv6Cidr } from '../ip.js';
import type { Subnet, Vpc } from '../model.js';
import type { StateStore } from './store.js';

/** Adds a VPC. The caller (scenario loader) has validated ids and CIDRs. */
export function addVpc(store: StateStore, vpc: Vpc): void {
  store.ids.reserve(vpc.id);
  store.vpcs.set(vpc.id, vpc);
}

/** Adds a subnet with its address pools. */
export function addSubnet(store: StateStore, s: Omit<Subnet, 'ipv4' | 'ipv6'>): Subnet {
  const cidr = parseIpv4Cidr(s.cidrBlock);
  if (!cidr) throw new Ec2SimError('InvalidParameterValue', `Invalid CIDR ${s.cidrBlock}`);
  const v6 = s.ipv6CidrBlock ? parseIpv6Cidr(s.ipv6CidrBlock) : undefined;
  const subnet: Subnet = { ...s, ipv4: new Ipv4Pool(cidr), ipv6: v6 ? new Ipv6Pool(v6) : undefined };
  store.ids.reserve(s.id);
  store.subnets.set(s.id, subnet);
  return subnet;
}
