import { isNetlinkError, type NetlinkHandleSync, openSync, sysctlWrite } from '@vpc-cni-kit/netlink';
import { ipv4Size, parseIpv4, parseIpv4Cidr } from '../ip.js';
import type { SecurityGroupRule } from '../model.js';
import { VpcError } from './errors.js';
import { nftApply, nftCounters } from './exec.js';
import {
  type EniIpv6,
  eui64LinkLocal,
  NFT6_TABLE,
  NO_IPV6,
  nft6Base,
  nft6EniRemove,
  nft6EniUpsert,
  nft6Ownership,
  ownedIpv6Destinations,
  UNOWNED6_COUNTER,
  VPC_IPV6_ADDRESSES,
} from './ipv6-plan.js';
import {
  DROP_REASONS,
  type DropReason,
  ENI_MTU,
  type EniIpv4,
  NFT_TABLE,
  nftBase,
  nftBranchRemove,
  nftBranchUpsert,
  nftEniRemove,
  nftEniUpsert,
  nftOwnership,
  nftVpcCidrs,
  ownedDestinations,
  REASON_COUNTERS,
  ROUTER_UPLINK,
  routerLinkName,
  type SubnetAddressing,
  VPC_ADDRESSES,
} from './plan.js';
import {
  egressCounter,
  ingressCounter,
  NFT_SG_TABLE,
  nftSecurityGroups,
  type SecurityObjects,
} from './security-plan.js';

/** One ENI as the router knows it. */
export interface RouterEni {
  /** ENI id. */
  readonly eniId: string;
  /** Instance it is attached to. */
  readonly instanceId: string;
  /** The ENI's MAC. */
  readonly mac: string;
  /** Router-side link name (a branch's is its trunk's). */
  readonly link: string;
  /** Name of its nft check, counter and source set (`link` for an ENI, `b<mark>` for a branch). */
  readonly key: string;
  /** Link name inside the instance (a branch's is its trunk's). */
  readonly ifname: string;
  /** Addresses it owns now. */
  ipv4: EniIpv4;
  /** IPv6 addresses and prefixes it owns now (routed only when the VPC has an IPv6 block). */
  ipv6: EniIpv6;
  /** Source/destination check on. */
  sourceDestCheck: boolean;
  /** The primary address maps to a public address (the instance's primary ENI). */
  readonly isPublic: boolean;
  /** Packet mark of traffic from it (for the security-group checks). */
  readonly mark: number;
  /** Its security groups. */
  groups: readonly string[];
  /** Set for a branch ENI: the trunk it rides on. */
  readonly trunkEniId: string | undefined;
}

/** What {@link VpcRouter.plugBranch} needs. */
export interface PlugBranchRequest {
  /** Branch ENI id. */
  readonly eniId: string;
  /** Its trunk (already plugged). */
  readonly trunkEniId: string;
  /** The branch's MAC: the router tells branches on a trunk apart by it. */
  readonly mac: string;
  /** Owned addresses. */
  readonly ipv4: EniIpv4;
  /** Source/destination check on. */
  readonly sourceDestCheck: boolean;
  /** Security groups. */
  readonly groups: readonly string[];
}

/** What {@link VpcRouter.plug} needs. */
export interface PlugRequest {
  /** ENI id. */
  readonly eniId: string;
  /** Instance id. */
  readonly instanceId: string;
  /** ENI MAC (given to the instance-side link). */
  readonly mac: string;
  /** Owned addresses. */
  readonly ipv4: EniIpv4;
  /** Owned IPv6 addresses and prefixes (default none). */
  readonly ipv6?: EniIpv6;
  /** Source/destination check on. */
  readonly sourceDestCheck: boolean;
  /** The instance's primary ENI (its primary address is public). */
  readonly isPublic: boolean;
  /** Security groups (default: none, so nothing new gets in or out until groups are set). */
  readonly groups?: readonly string[];
  /** Instance namespace file. */
  readonly instanceNetns: string;
  /** Name of the link inside the instance (`ethN`). */
  readonly ifname: string;
}

/** Where the router delivers an address. */
export interface AddressOwner {
  /** ENI id. */
  readonly eniId: string;
  /** Instance the ENI is attached to. */
  readonly instanceId: string;
  /** Router-side link. */
  readonly link: string;
}

/** The router's address map and drop counters. */
export interface RouterView {
  /** Owned address or prefix → the ENI it is delivered to. */
  readonly addresses: Readonly<Record<string, AddressOwner>>;
  /** Drops by reason, since the run started. */
  readonly drops: Readonly<Record<DropReason, number>>;
  /** Source/destination-check drops per ENI id. */
  readonly sourceDestCheckDropsByEni: Readonly<Record<string, number>>;
  /** Security-group drops per ENI id (ENIs without any left out): new flows refused into it (`ingress`) or out of it (`egress`). */
  readonly securityGroupDropsByEni: Readonly<Record<string, { ingress: number; egress: number }>>;
  /** Subnet gateways the router answers on. */
  readonly gateways: readonly string[];
  /** Public (internet-mappable) addresses. */
  readonly publicAddresses: readonly string[];
}

function ignoring<T>(codes: readonly string[], f: () => T): T | undefined {
  try {
    return f();
  } catch (e) {
    if (isNetlinkError(e) && codes.includes(e.code)) return undefined;
    throw e;
  }
}

function dataplane<T>(op: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof VpcError) throw e;
    throw new VpcError('VPC_DATAPLANE', op, String((e as Error)?.message ?? e), { cause: e });
  }
}

/**
 * The VPC router namespace: one veth per attached ENI, per-address routes to the owning ENI with a
 * permanent neighbour for its MAC, proxy ARP (so instances never answer ARP for their secondary addresses
 * or prefixes), every subnet gateway on its loopback, and nftables checks with counters per drop reason.
 * Also builds the internet namespace behind it. All calls are synchronous.
 */
export class VpcRouter {
  readonly #rtr: NetlinkHandleSync;
  readonly #routerNetns: string;
  readonly #internetNetns: string;
  readonly #vpcCidrs: string[];
  /** The VPC's IPv6 blocks; empty: IPv6 is off in the router. */
  readonly #vpcIpv6Cidrs: readonly string[];
  readonly #gateways: readonly string[];
  readonly #enis = new Map<string, RouterEni>();
  readonly #linkOwners = new Map<string, string>();
  #rules: ReadonlyMap<string, readonly SecurityGroupRule[]> = new Map();
  #sgObjects: SecurityObjects = { chains: [], sets: [] };
  readonly #sgSeen = new Set<string>();
  #links = 0;
  #marks = 0;
  #closed = false;

  private constructor(
    rtr: NetlinkHandleSync,
    routerNetns: string,
    internetNetns: string,
    vpcCidrs: readonly string[],
    vpcIpv6Cidrs: readonly string[],
    gateways: readonly string[],
  ) {
    this.#rtr = rtr;
    this.#routerNetns = routerNetns;
    this.#internetNetns = internetNetns;
    this.#vpcCidrs = [...vpcCidrs];
    this.#vpcIpv6Cidrs = [...vpcIpv6Cidrs];
    this.#gateways = gateways;
  }

  /**
   * Configures an (empty, already created) router namespace and internet namespace: forwarding, proxy ARP,
   * gateways, the uplink, unreachable routes for the VPC CIDRs and the nft base table. With IPv6 blocks
   * (`vpcIpv6Cidrs`), the same in IPv6: an IPv6 uplink, the internet's IPv6 host, and the `ip6` checks.
   */
  static create(opts: {
    routerNetns: string;
    internetNetns: string;
    vpcCidrs: readonly string[];
    vpcIpv6Cidrs?: readonly string[];
    subnets: readonly SubnetAddressing[];
  }): VpcRouter {
    const op = 'router.create';
    const gateways = [...new Set(opts.subnets.map((s) => s.gateway))];
    const v6 = opts.vpcIpv6Cidrs ?? [];
    return dataplane(op, () => {
      const ns = { netns: opts.routerNetns };
      const ipv6Sysctls = [
        ['net/ipv6/conf/all/disable_ipv6', 0],
        ['net/ipv6/conf/default/disable_ipv6', 0],
        ['net/ipv6/conf/all/forwarding', 1],
        // Addresses and link-locals usable at once (nothing else is on these links).
        ['net/ipv6/conf/default/accept_dad', 0],
      ] as const;
      if (v6.length > 0) {
        for (const [k, val] of ipv6Sysctls) sysctlWrite(k, val, { netns: opts.internetNetns });
      }
      for (const [k, v] of [
        ['net/ipv4/ip_forward', 1],
        ['net/ipv4/conf/all/rp_filter', 0],
        ['net/ipv4/conf/default/rp_filter', 0],
        ['net/ipv4/conf/all/send_redirects', 0],
        ['net/ipv4/conf/default/send_redirects', 0],
        ['net/ipv4/conf/all/proxy_arp', 1],
        ...(v6.length > 0
          ? ipv6Sysctls
          : ([
              ['net/ipv6/conf/all/disable_ipv6', 1],
              ['net/ipv6/conf/default/disable_ipv6', 1],
            ] as const)),
      ] as const) {
        sysctlWrite(k, v, ns);
      }
      const rtr = openSync(ns);
      const inet = openSync({ netns: opts.internetNetns });
      try {
        rtr.linkSet('lo', { up: true });
        inet.linkSet('lo', { up: true });
        for (const gw of gateways) rtr.addrAdd({ dev: 'lo', address: `${gw}/32` });
        rtr.addrAdd({ dev: 'lo', address: `${VPC_ADDRESSES.imds}/32` });
        rtr.linkAdd({
          kind: 'veth',
          name: ROUTER_UPLINK,
          mtu: ENI_MTU,
          up: true,
          peer: { name: 'eth0', mtu: ENI_MTU, netns: opts.internetNetns },
        });
        const len = VPC_ADDRESSES.uplinkPrefixLength;
        rtr.addrAdd({ dev: ROUTER_UPLINK, address: `${VPC_ADDRESSES.routerUplink}/${len}` });
        rtr.routeAdd({ dst: 'default', gateway: VPC_ADDRESSES.internetUplink });
        for (const cidr of opts.vpcCidrs) rtr.routeAdd({ dst: cidr, type: 'unreachable' });
        inet.linkSet('eth0', { up: true });
        inet.addrAdd({ dev: 'eth0', address: `${VPC_ADDRESSES.internetUplink}/${len}` });
        inet.addrAdd({ dev: 'lo', address: `${VPC_ADDRESSES.ec2}/32` });
        inet.addrAdd({ dev: 'lo', address: `${VPC_ADDRESSES.internetHost}/32` });
        for (const cidr of opts.vpcCidrs) inet.routeAdd({ dst: cidr, gateway: VPC_ADDRESSES.routerUplink });
        if (v6.length > 0) {
          const a = VPC_IPV6_ADDRESSES;
          const l6 = a.uplinkPrefixLength;
          rtr.addrAdd({ dev: ROUTER_UPLINK, address: `${a.routerUplink}/${l6}`, nodad: true });
          inet.addrAdd({ dev: 'eth0', address: `${a.internetUplink}/${l6}`, nodad: true });
          inet.addrAdd({ dev: 'lo', address: `${a.internetHost}/128`, nodad: true });
          rtr.routeAdd({ dst: '::/0', gateway: a.internetUplink });
          for (const cidr of v6) {
            rtr.routeAdd({ dst: cidr, type: 'unreachable' });
            inet.routeAdd({ dst: cidr, gateway: a.routerUplink });
          }
        }
      } catch (e) {
        rtr.close();
        throw e;
      } finally {
        inet.close();
      }
      const router = new VpcRouter(rtr, opts.routerNetns, opts.internetNetns, opts.vpcCidrs, v6, gateways);
      nftApply(op, opts.routerNetns, [
        ...nftBase(opts.vpcCidrs),
        ...router.#ownership(),
        ...router.#security(),
        ...(v6.length > 0 ? [...nft6Base(v6), ...router.#ownership6()] : []),
      ]);
      return router;
    });
  }

  /** The VPC's IPv6 blocks (empty: IPv6 is off). */
  vpcIpv6Cidrs(): string[] {
    return [...this.#vpcIpv6Cidrs];
  }

  /** The VPC's IPv4 blocks the router routes now. */
  vpcCidrs(): string[] {
    return [...this.#vpcCidrs];
  }

  /**
   * Routes a block newly associated with the VPC: unreachable in the router until an ENI owns an address
   * in it, reachable from the internet namespace, and part of the VPC set the checks use.
   */
  addVpcCidr(cidr: string): void {
    this.#open('router.addVpcCidr');
    if (this.#vpcCidrs.includes(cidr)) return;
    dataplane('router.addVpcCidr', () => {
      this.#rtr.routeAdd({ dst: cidr, type: 'unreachable' });
      this.#inInternet((inet) => inet.routeAdd({ dst: cidr, gateway: VPC_ADDRESSES.routerUplink }));
      this.#vpcCidrs.push(cidr);
      nftApply('router.addVpcCidr', this.#routerNetns, nftVpcCidrs(this.#vpcCidrs));
    });
  }

  /** Undoes {@link VpcRouter.addVpcCidr} for a block that left the VPC. */
  removeVpcCidr(cidr: string): void {
    this.#open('router.removeVpcCidr');
    const i = this.#vpcCidrs.indexOf(cidr);
    if (i < 0) return;
    dataplane('router.removeVpcCidr', () => {
      this.#vpcCidrs.splice(i, 1);
      nftApply('router.removeVpcCidr', this.#routerNetns, nftVpcCidrs(this.#vpcCidrs));
      this.#rtr.routeDel({ dst: cidr, type: 'unreachable' });
      this.#inInternet((inet) => inet.routeDel({ dst: cidr, gateway: VPC_ADDRESSES.routerUplink }));
    });
  }

  /** Runs `f` with a netlink handle in the internet namespace. */
  #inInternet(f: (inet: NetlinkHandleSync) => void): void {
    const inet = openSync({ netns: this.#internetNetns });
    try {
      f(inet);
    } finally {
      inet.close();
    }
  }

  /** The router namespace file. */
  get netns(): string {
    return this.#routerNetns;
  }

  /** The ENIs plugged in now. */
  enis(): RouterEni[] {
    return [...this.#enis.values()];
  }

  /** One plugged ENI. */
  eni(eniId: string): RouterEni | undefined {
    return this.#enis.get(eniId);
  }

  /**
   * Hot-plugs an ENI: a veth whose router end is `eN` and whose other end is created directly in the
   * instance namespace as `ifname` with the ENI's MAC (left down, unconfigured, as a hypervisor hands it
   * over), then routes, neighbour and nft checks for its addresses (one nft transaction).
   */
  plug(req: PlugRequest): RouterEni {
    this.#open('router.plug');
    if (this.#enis.has(req.eniId)) return this.#enis.get(req.eniId)!;
    const link = routerLinkName(++this.#links);
    return dataplane('router.plug', () => {
      this.#rtr.linkAdd({
        kind: 'veth',
        name: link,
        mtu: ENI_MTU,
        up: true,
        peer: { name: req.ifname, mtu: ENI_MTU, address: req.mac, netns: req.instanceNetns },
      });
      const eni: RouterEni = {
        eniId: req.eniId,
        instanceId: req.instanceId,
        mac: req.mac,
        link,
        key: link,
        ifname: req.ifname,
        ipv4: { primary: req.ipv4.primary, secondaries: [], prefixes: [] },
        ipv6: NO_IPV6,
        sourceDestCheck: req.sourceDestCheck,
        isPublic: req.isPublic,
        mark: ++this.#marks,
        groups: req.groups ?? [],
        trunkEniId: undefined,
      };
      try {
        // Answer proxy ARP at once (the default waits up to 0.8 s at random for broadcast requests).
        sysctlWrite(`net/ipv4/neigh/${link}/proxy_delay`, 0, { netns: this.#routerNetns });
        this.#rtr.neighReplace({ dev: link, address: req.ipv4.primary, lladdr: req.mac });
        this.#rtr.routeReplace({ dst: `${req.ipv4.primary}/32`, dev: link, scope: 'link' });
        this.#enis.set(req.eniId, eni);
        this.#linkOwners.set(link, req.eniId);
        this.#routes(eni, req.ipv4);
        eni.ipv4 = req.ipv4;
        if (this.#ipv6On) {
          // The ENI's IPv6 gateway, as on AWS; the ENI's own link-local (from its MAC) is the next hop.
          this.#rtr.addrAdd({ dev: link, address: `${VPC_IPV6_ADDRESSES.gateway}/64`, nodad: true });
          this.#rtr.neighReplace({ dev: link, address: eui64LinkLocal(req.mac), lladdr: req.mac });
          this.#routes6(eni, req.ipv6 ?? NO_IPV6);
          eni.ipv6 = req.ipv6 ?? NO_IPV6;
        }
        nftApply('router.plug', this.#routerNetns, [
          ...nftEniUpsert(link, ownedDestinations(eni.ipv4), eni.sourceDestCheck, true, eni.mark),
          ...this.#ownership(),
          ...this.#security(),
          ...(this.#ipv6On
            ? [
                ...nft6EniUpsert(link, ownedIpv6Destinations(eni.ipv6), eni.sourceDestCheck, true),
                ...this.#ownership6(),
              ]
            : []),
        ]);
      } catch (e) {
        this.#enis.delete(req.eniId);
        ignoring(['ENODEV'], () => this.#rtr.linkDel(link));
        throw e;
      }
      return eni;
    });
  }

  /**
   * Hot-plugs a branch ENI onto its plugged trunk: routes and a permanent neighbour for its addresses on the
   * trunk's link with the branch's MAC, a check keyed by that MAC, and its security groups. The instance side
   * (a link stacked on the trunk with the branch's MAC) is the node's to create, as on EC2. Returns
   * `undefined` when the trunk is not plugged (the branch is plugged with it later).
   */
  plugBranch(req: PlugBranchRequest): RouterEni | undefined {
    this.#open('router.plugBranch');
    const have = this.#enis.get(req.eniId);
    if (have) return have;
    const trunk = this.#enis.get(req.trunkEniId);
    if (!trunk) return undefined;
    return dataplane('router.plugBranch', () => {
      const mark = ++this.#marks;
      const eni: RouterEni = {
        eniId: req.eniId,
        instanceId: trunk.instanceId,
        mac: req.mac,
        link: trunk.link,
        key: `b${mark}`,
        ifname: trunk.ifname,
        ipv4: { primary: req.ipv4.primary, secondaries: [], prefixes: [] },
        ipv6: NO_IPV6,
        sourceDestCheck: req.sourceDestCheck,
        isPublic: false,
        mark,
        groups: req.groups,
        trunkEniId: trunk.eniId,
      };
      try {
        this.#rtr.neighReplace({ dev: trunk.link, address: req.ipv4.primary, lladdr: req.mac });
        this.#rtr.routeReplace({ dst: `${req.ipv4.primary}/32`, dev: trunk.link, scope: 'link' });
        this.#enis.set(req.eniId, eni);
        this.#linkOwners.set(eni.key, req.eniId);
        this.#routes(eni, req.ipv4);
        eni.ipv4 = req.ipv4;
        nftApply('router.plugBranch', this.#routerNetns, [
          ...nftBranchUpsert(
            trunk.link,
            eni.key,
            eni.mac,
            ownedDestinations(eni.ipv4),
            eni.sourceDestCheck,
            true,
            mark,
          ),
          ...this.#ownership(),
          ...this.#security(),
        ]);
      } catch (e) {
        this.#enis.delete(req.eniId);
        this.#forgetBranchRoutes(eni);
        throw e;
      }
      return eni;
    });
  }

  /**
   * Brings routes and checks of a plugged ENI in step with its addresses (no-op when unchanged). `ipv6`
   * (default: unchanged) only matters when the VPC has an IPv6 block; branches carry no IPv6 here.
   */
  update(eniId: string, ipv4: EniIpv4, sourceDestCheck: boolean, ipv6?: EniIpv6): void {
    this.#open('router.update');
    const eni = this.#enis.get(eniId);
    if (!eni) return;
    const next6 = this.#ipv6On && eni.trunkEniId === undefined ? (ipv6 ?? eni.ipv6) : eni.ipv6;
    const same6 = ownedIpv6Destinations(eni.ipv6).join(',') === ownedIpv6Destinations(next6).join(',');
    const before = ownedDestinations(eni.ipv4).join(',');
    if (before === ownedDestinations(ipv4).join(',') && sourceDestCheck === eni.sourceDestCheck && same6)
      return;
    dataplane('router.update', () => {
      this.#routes(eni, ipv4);
      eni.ipv4 = ipv4;
      eni.sourceDestCheck = sourceDestCheck;
      if (!same6) this.#routes6(eni, next6);
      eni.ipv6 = next6;
      const owned = ownedDestinations(ipv4);
      nftApply('router.update', this.#routerNetns, [
        ...(eni.trunkEniId === undefined
          ? nftEniUpsert(eni.link, owned, sourceDestCheck, false, eni.mark)
          : nftBranchUpsert(eni.link, eni.key, eni.mac, owned, sourceDestCheck, false, eni.mark)),
        ...this.#ownership(),
        ...this.#security(),
        ...(this.#ipv6On && eni.trunkEniId === undefined
          ? [
              ...nft6EniUpsert(eni.link, ownedIpv6Destinations(next6), sourceDestCheck, false),
              ...this.#ownership6(),
            ]
          : []),
      ]);
    });
  }

  /**
   * Replaces the security groups of plugged ENIs (`groupsOf`) and every group's rules, in one nft
   * transaction: new flows meet the new rules at once, established flows keep going (as on EC2).
   */
  setSecurity(
    rules: ReadonlyMap<string, readonly SecurityGroupRule[]>,
    groupsOf: (eniId: string) => readonly string[] | undefined,
  ): void {
    this.#open('router.setSecurity');
    dataplane('router.setSecurity', () => {
      this.#rules = rules;
      for (const e of this.#enis.values()) e.groups = groupsOf(e.eniId) ?? e.groups;
      nftApply('router.setSecurity', this.#routerNetns, this.#security());
    });
  }

  /**
   * Unplugs an ENI: deletes its veth (both ends) and its checks; a trunk takes its branches with it; a
   * branch loses its routes and check at once. No-op for an unknown ENI.
   */
  unplug(eniId: string): void {
    this.#open('router.unplug');
    const eni = this.#enis.get(eniId);
    if (!eni) return;
    dataplane('router.unplug', () => {
      if (eni.trunkEniId !== undefined) {
        this.#forgetBranchRoutes(eni);
        this.#enis.delete(eniId);
        nftApply('router.unplug', this.#routerNetns, [
          ...nftBranchRemove(eni.link, eni.key, eni.mac),
          ...this.#ownership(),
          ...this.#security(),
        ]);
        return;
      }
      const branches = [...this.#enis.values()].filter((b) => b.trunkEniId === eniId);
      ignoring(['ENODEV'], () => this.#rtr.linkDel(eni.link));
      this.#enis.delete(eniId);
      for (const b of branches) this.#enis.delete(b.eniId);
      nftApply('router.unplug', this.#routerNetns, [
        ...nftEniRemove(eni.link),
        ...branches.flatMap((b) => nftBranchRemove(eni.link, b.key, b.mac, true)),
        ...this.#ownership(),
        ...this.#security(),
        ...(this.#ipv6On ? [...nft6EniRemove(eni.link), ...this.#ownership6()] : []),
      ]);
    });
  }

  /** The address map and the drop counters (reads the kernel's counters now). */
  view(): RouterView {
    this.#open('router.view');
    const counters = nftCounters('router.view', this.#routerNetns, NFT_TABLE);
    const sgCounters = nftCounters('router.view', this.#routerNetns, NFT_SG_TABLE);
    const counters6 = this.#ipv6On
      ? nftCounters('router.view', this.#routerNetns, NFT6_TABLE, 'ip6')
      : new Map<string, number>();
    const drops = Object.fromEntries(DROP_REASONS.map((r) => [r, 0])) as Record<DropReason, number>;
    const byEni: Record<string, number> = {};
    for (const [name, packets] of [...counters, ...counters6]) {
      if (name.startsWith('sdc_')) {
        const eniId = this.#linkOwners.get(name.slice(4));
        drops['source-dest-check'] += packets;
        if (eniId !== undefined) byEni[eniId] = (byEni[eniId] ?? 0) + packets;
      }
    }
    for (const [reason, name] of Object.entries(REASON_COUNTERS)) {
      drops[reason as DropReason] = counters.get(name) ?? 0;
    }
    drops['unassigned-destination'] += counters6.get(UNOWNED6_COUNTER) ?? 0;
    const sgByEni: Record<string, { ingress: number; egress: number }> = {};
    for (const eniId of this.#sgSeen) {
      const ingress = sgCounters.get(ingressCounter(eniId)) ?? 0;
      const egress = sgCounters.get(egressCounter(eniId)) ?? 0;
      drops['security-group'] += ingress + egress;
      if (ingress + egress > 0) sgByEni[eniId] = { ingress, egress };
    }
    const addresses: Record<string, AddressOwner> = {};
    for (const e of this.#enis.values()) {
      for (const d of ownedDestinations(e.ipv4)) {
        addresses[d.endsWith('/32') ? d.slice(0, -3) : d] = {
          eniId: e.eniId,
          instanceId: e.instanceId,
          link: e.link,
        };
      }
      for (const d of this.#ipv6On ? ownedIpv6Destinations(e.ipv6) : []) {
        addresses[d.endsWith('/128') ? d.slice(0, -4) : d] = {
          eniId: e.eniId,
          instanceId: e.instanceId,
          link: e.link,
        };
      }
    }
    return {
      addresses,
      drops,
      sourceDestCheckDropsByEni: byEni,
      securityGroupDropsByEni: sgByEni,
      gateways: [...this.#gateways],
      publicAddresses: this.#public(),
    };
  }

  /** The instance that owns an address now (for IMDS), or `undefined`. */
  ownerOf(address: string): string | undefined {
    const n = parseIpv4(address.startsWith('::ffff:') ? address.slice(7) : address);
    if (n === undefined) return undefined;
    for (const e of this.#enis.values()) {
      for (const d of ownedDestinations(e.ipv4)) {
        const c = parseIpv4Cidr(d);
        if (c !== undefined && n >= c.base && n < c.base + ipv4Size(c)) return e.instanceId;
      }
    }
    return undefined;
  }

  /** Closes the router's netlink socket (the namespaces are deleted by their owner). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#rtr.close();
  }

  #open(op: string): void {
    if (this.#closed) throw new VpcError('VPC_CLOSED', op, 'the router is closed');
  }

  /** The nft commands that rebuild every security-group check for the ENIs plugged now. */
  #security(): string[] {
    const enis = [...this.#enis.values()].map((e) => ({
      eniId: e.eniId,
      mark: e.mark,
      owned: ownedDestinations(e.ipv4),
      groups: e.groups,
    }));
    for (const e of enis) this.#sgSeen.add(e.eniId);
    const { commands, objects } = nftSecurityGroups({ enis, rules: this.#rules }, this.#sgObjects);
    this.#sgObjects = objects;
    return commands;
  }

  /** Deletes a branch's routes and neighbour on its trunk's link (the link stays). */
  #forgetBranchRoutes(eni: RouterEni): void {
    for (const d of ownedDestinations(eni.ipv4)) {
      ignoring(['ESRCH', 'ENOENT'], () => this.#rtr.routeDel({ dst: d, dev: eni.link }));
    }
    ignoring(['ESRCH', 'ENOENT', 'EINVAL'], () =>
      this.#rtr.neighDel({ dev: eni.link, address: eni.ipv4.primary, lladdr: eni.mac }),
    );
  }

  get #ipv6On(): boolean {
    return this.#vpcIpv6Cidrs.length > 0;
  }

  #ownership6(): string[] {
    return nft6Ownership([...this.#enis.values()].flatMap((e) => ownedIpv6Destinations(e.ipv6)));
  }

  /** Routes every IPv6 destination of the ENI via its link-local next hop, and deletes vanished ones. */
  #routes6(eni: RouterEni, next: EniIpv6): void {
    const have = new Set(ownedIpv6Destinations(eni.ipv6));
    const want = new Set(ownedIpv6Destinations(next));
    for (const d of have) {
      if (!want.has(d)) ignoring(['ESRCH'], () => this.#rtr.routeDel({ dst: d, dev: eni.link }));
    }
    for (const d of want) {
      if (!have.has(d)) this.#rtr.routeReplace({ dst: d, gateway: eui64LinkLocal(eni.mac), dev: eni.link });
    }
  }

  #public(): string[] {
    return [...this.#enis.values()].filter((e) => e.isPublic).map((e) => e.ipv4.primary);
  }

  #ownership(): string[] {
    const owned = [...this.#gateways.map((g) => `${g}/32`)];
    for (const e of this.#enis.values()) owned.push(...ownedDestinations(e.ipv4));
    return nftOwnership(owned, this.#public());
  }

  /** Adds routes for new destinations (via the ENI's primary, on-link) and deletes vanished ones. */
  #routes(eni: RouterEni, next: EniIpv4): void {
    const primary = `${eni.ipv4.primary}/32`;
    const have = new Set(ownedDestinations(eni.ipv4).filter((d) => d !== primary));
    const want = new Set(ownedDestinations(next).filter((d) => d !== primary));
    for (const d of have) {
      if (!want.has(d)) ignoring(['ESRCH'], () => this.#rtr.routeDel({ dst: d, dev: eni.link }));
    }
    for (const d of want) {
      if (!have.has(d)) {
        this.#rtr.routeReplace({ dst: d, gateway: eni.ipv4.primary, dev: eni.link, onlink: true });
      }
    }
  }
}
