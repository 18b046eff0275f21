import type { StateStore } from './store.js';

const values = (list: readonly { value: string }[]): string[] => list.map((a) => a.value);

/** A JSON-friendly dump of the whole account (what `GET /_sim/state` shows). */
export function snapshotState(store: StateStore): unknown {
  store.settle();
  const tags = (m: Map<string, string>) => Object.fromEntries(m);
  return {
    time: new Date(store.now()).toISOString(),
    timing: { ...store.timing },
    vpcs: [...store.vpcs.values()],
    subnets: [...store.subnets.values()].map((s) => ({
      id: s.id,
      vpcId: s.vpcId,
      cidrBlock: s.cidrBlock,
      ipv6CidrBlock: s.ipv6CidrBlock,
      availabilityZone: s.availabilityZone,
      availableIpAddressCount: s.ipv4.available,
      tags: tags(s.tags),
    })),
    securityGroups: [...store.groups.values()].map((g) => ({ ...g, tags: tags(g.tags) })),
    trunkAssociations: [...store.associations.values()].map((a) => ({ ...a, tags: tags(a.tags) })),
    instances: [...store.instances.values()].map((i) => ({
      id: i.id,
      instanceType: i.type.name,
      subnetId: i.subnetId,
      vpcId: i.vpcId,
      availabilityZone: i.availabilityZone,
      primaryEniId: i.primaryEniId,
      tags: tags(i.tags),
    })),
    networkInterfaces: [...store.enis.values()].map((e) => ({
      id: e.id,
      subnetId: e.subnetId,
      vpcId: e.vpcId,
      mac: e.mac,
      interfaceType: e.interfaceType,
      description: e.description,
      status: e.attachment ? 'in-use' : 'available',
      groups: e.groups,
      tags: tags(e.tags),
      privateIpAddresses: values(e.privateIps),
      ipv4Prefixes: values(e.ipv4Prefixes),
      ipv6Addresses: values(e.ipv6Addresses),
      ipv6Prefixes: values(e.ipv6Prefixes),
      attachment: e.attachment ? { ...e.attachment } : undefined,
      createdAt: new Date(e.createdAt).toISOString(),
    })),
  };
}
