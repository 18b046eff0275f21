import type { Ec2Simulator } from '../simulator.js';
import { VPC_IPV6_ADDRESSES } from './ipv6-plan.js';
import type { RunNames } from './names.js';
import { subnetAddressing, VPC_ADDRESSES } from './plan.js';
import type { VpcRouter } from './router.js';

/** One ENI of an instance, as the instance sees it. */
export interface DescribedEni {
  /** ENI id. */
  readonly eniId: string;
  /** MAC (also the link's address inside the instance). */
  readonly mac: string;
  /** Link name inside the instance namespace, while plugged. */
  readonly ifname: string | undefined;
  /** Router-side link name. */
  readonly routerLink: string | undefined;
  /** Device index of the attachment. */
  readonly deviceIndex: number;
  /** Primary private address. */
  readonly primaryIp: string;
  /** Subnet id. */
  readonly subnetId: string;
}

/** One instance of the run. */
export interface DescribedInstance {
  /** Instance id. */
  readonly instanceId: string;
  /** Instance type. */
  readonly instanceType: string;
  /** Namespace name (`ip netns exec NAME …`). */
  readonly netns: string;
  /** Namespace file (`nsenter --net=PATH …`). */
  readonly netnsPath: string;
  /** Primary private address (on eth0). */
  readonly privateIp: string;
  /** The primary ENI's IPv6 address (on eth0; IMDS `ipv6`), when it has one and the VPC has an IPv6 block. */
  readonly ipv6?: string;
  /** Subnet of the primary ENI. */
  readonly subnetId: string;
  /** Its CIDR. */
  readonly subnetCidr: string;
  /** Default gateway (subnet base + 1). */
  readonly gateway: string;
  /** Attached ENIs, by device index. */
  readonly enis: readonly DescribedEni[];
  /** IMDS as seen from inside the instance. */
  readonly imdsEndpoint: string;
  /** EC2 API endpoint as seen from inside the instance (set it as `AWS_EC2_ENDPOINT`). */
  readonly ec2Endpoint: string;
}

/** A VPC of the run. */
export interface DescribedVpc {
  /** VPC id. */
  readonly vpcId: string;
  /** IPv4 CIDR blocks, primary first. */
  readonly cidrBlocks: readonly string[];
  /** The IPv6 block, when it has one. */
  readonly ipv6CidrBlock?: string;
}

/** A subnet of the run. */
export interface DescribedSubnet {
  /** Subnet id. */
  readonly subnetId: string;
  /** IPv4 CIDR. */
  readonly cidr: string;
  /** IPv6 CIDR, when it has one. */
  readonly ipv6Cidr?: string;
  /** Its gateway (base + 1) on the VPC router. */
  readonly gateway: string;
  /** Availability zone. */
  readonly availabilityZone: string;
}

/** A namespace of the run. */
export interface DescribedNetns {
  /** Namespace name (`ip netns exec NAME …`). */
  readonly netns: string;
  /** Namespace file (`nsenter --net=PATH …`). */
  readonly netnsPath: string;
}

/** The internet namespace and its hosts. */
export interface DescribedInternet extends DescribedNetns {
  /** A host that answers ping (IPv4 only). */
  readonly host: string;
  /** A host that answers ping over IPv6 only, when the VPC has an IPv6 block. */
  readonly hostIpv6?: string;
  /** The EC2 endpoint's address. */
  readonly ec2Address: string;
}

/** What `vpc-sim up` prints on one line, and `VirtualVpc.describe()` returns. */
export interface VirtualVpcDescription {
  /** Run id (in every namespace name). */
  readonly runId: string;
  /** The process serving EC2 and IMDS. */
  readonly pid: number;
  /** Region to configure in SDKs. */
  readonly region: string;
  /** VPCs and their CIDR blocks. */
  readonly vpcs: readonly DescribedVpc[];
  /** Subnets with their gateways. */
  readonly subnets: readonly DescribedSubnet[];
  /** Instances. */
  readonly instances: readonly DescribedInstance[];
  /** The router namespace. */
  readonly router: DescribedNetns;
  /** The internet namespace and its addresses. */
  readonly internet: DescribedInternet;
  /** EC2 endpoint from inside any instance. */
  readonly ec2Endpoint: string;
  /** IMDS endpoint from inside any instance. */
  readonly imdsEndpoint: string;
  /** EC2 endpoint on the host's loopback (for tests and tools outside the VPC). */
  readonly ec2EndpointLocal: string;
  /** The simulator's own admin API (`/_sim/state`, `/_sim/faults`, …) on loopback. */
  readonly simulatorAdminEndpoint: string;
  /** This run's admin API on loopback: `GET /vpc`, `GET /vpc/router`, `GET /vpc/errors`. */
  readonly adminEndpoint: string;
  /** The run record. */
  readonly stateFile: string;
  /** The command that removes the run. */
  readonly down: string;
}

/** Builds a run's description from the control plane's state and the router. */
export function describeRun(d: {
  runId: string;
  sim: Ec2Simulator;
  names: RunNames;
  netnsPath: (name: string) => string;
  router: VpcRouter;
  stateFile: string;
  adminEndpoint: string;
}): VirtualVpcDescription {
  const { sim, names } = d;
  const ec2Endpoint = `http://${VPC_ADDRESSES.ec2}`;
  const imdsEndpoint = `http://${VPC_ADDRESSES.imds}`;
  const ifnames = new Map<string, { ifname: string; link: string }>();
  for (const e of d.router.enis()) ifnames.set(e.eniId, { ifname: e.ifname, link: e.link });
  const ipv6On = d.router.vpcIpv6Cidrs().length > 0;
  return {
    runId: d.runId,
    pid: process.pid,
    region: sim.region,
    vpcs: sim.state.vpcs().map((v) => ({
      vpcId: v.id,
      cidrBlocks: [...v.cidrBlocks],
      ...(v.ipv6CidrBlock ? { ipv6CidrBlock: v.ipv6CidrBlock } : {}),
    })),
    subnets: sim.state.subnets().map((s) => ({
      subnetId: s.id,
      cidr: s.cidrBlock,
      ...(s.ipv6CidrBlock ? { ipv6Cidr: s.ipv6CidrBlock } : {}),
      gateway: subnetAddressing(s.cidrBlock).gateway,
      availabilityZone: s.availabilityZone,
    })),
    instances: sim.state.instances().map((inst) => {
      const primary = sim.state.eni(inst.primaryEniId)!;
      const sub = sim.state.subnet(primary.subnetId)!;
      const addressing = subnetAddressing(sub.cidrBlock);
      const netns = names.instance(inst.id);
      return {
        instanceId: inst.id,
        instanceType: inst.type.name,
        netns,
        netnsPath: d.netnsPath(netns),
        privateIp: primary.privateIps[0]!.value,
        ...(ipv6On && primary.ipv6Addresses[0] ? { ipv6: primary.ipv6Addresses[0].value } : {}),
        subnetId: sub.id,
        subnetCidr: addressing.cidr,
        gateway: addressing.gateway,
        enis: sim.state.attachedEnis(inst.id).map((e) => ({
          eniId: e.id,
          mac: e.mac,
          ifname: ifnames.get(e.id)?.ifname,
          routerLink: ifnames.get(e.id)?.link,
          deviceIndex: e.attachment!.deviceIndex,
          primaryIp: e.privateIps[0]!.value,
          subnetId: e.subnetId,
        })),
        imdsEndpoint,
        ec2Endpoint,
      };
    }),
    router: { netns: names.router, netnsPath: d.netnsPath(names.router) },
    internet: {
      netns: names.internet,
      netnsPath: d.netnsPath(names.internet),
      host: VPC_ADDRESSES.internetHost,
      ...(ipv6On ? { hostIpv6: VPC_IPV6_ADDRESSES.internetHost } : {}),
      ec2Address: VPC_ADDRESSES.ec2,
    },
    ec2Endpoint,
    imdsEndpoint,
    ec2EndpointLocal: sim.endpoint,
    simulatorAdminEndpoint: sim.adminEndpoint,
    adminEndpoint: d.adminEndpoint,
    stateFile: d.stateFile,
    down: `vpc-sim down --run ${d.runId}`,
  };
}
