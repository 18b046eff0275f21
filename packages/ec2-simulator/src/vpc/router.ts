import { isNetlinkError, type NetlinkHandleSync, openSync, sysctlWrite } from '@vpc-cni-kit/netlink';
import { parseIpv4 } from '../ip.js';
import { VpcError } from './errors.js';
import { nftApply, nftCounters } from './exec.js';
import {
  DROP_REASONS,
  type DropReason,
  ENI_MTU,
  type EniIpv4,
  NFT_TABLE,
  nftBase,
  nftEniRemove,
  nftEniUpsert,
  nftOwnership,
  ownedDestinations,
  REASON_COUNTERS,
  ROUTER_UPLINK,
  routerLinkName,
  type SubnetAddressing,
  VPC_ADDRESSES,
} from './plan.js';

/** One ENI as the router knows it. */
export interface RouterEni {
  /** ENI id. */
  readonly eniId: string;
  /** Instance it is attached to. */
  readonly instanceId: string;
  /** The ENI's MAC. */
  readonly mac: string;
  /** Router-side link name. */
  readonly link: string;
  /** Link name inside the instance. */
  readonly ifname: string;
  /** Addresses it owns now. */
  ipv4: EniIpv4;
  /** Source/destination check on. */
  sourceDestCheck: boolean;
  /** The primary address maps to a public address (the instance's primary ENI). */
  readonly isPublic: boolean;
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
  /** Source/destination check on. */
  readonly sourceDestCheck: boolean;
  /** The instance's primary ENI (its primary address is public). */
  readonly isPublic: boolean;
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
  readonly #gateways: readonly string[];
  readonly #enis = new Map<string, RouterEni>();
  readonly #linkOwners = new Map<string, string>();
  #links = 0;
  #closed = false;

  private constructor(rtr: NetlinkHandleSync, routerNetns: string, gateways: readonly string[]) {
    this.#rtr = rtr;
    this.#routerNetns = routerNetns;
    this.#gateways = gateways;
  }

  /**
   * Configures an (empty, already created) router namespace and internet namespace: forwarding, proxy ARP,
   * gateways, the uplink, unreachable routes for the VPC CIDRs and the nft base table.
   */
  static create(opts: {
    routerNetns: string;
    internetNetns: string;
    vpcCidrs: readonly string[];
    subnets: readonly SubnetAddressing[];
  }): VpcRouter {
    const op = 'router.create';
    const gateways = [...new Set(opts.subnets.map((s) => s.gateway))];
    return dataplane(op, () => {
      const ns = { netns: opts.routerNetns };
      for (const [k, v] of [
        ['net/ipv4/ip_forward', 1],
        ['net/ipv4/conf/all/rp_filter', 0],
        ['net/ipv4/conf/default/rp_filter', 0],
        ['net/ipv4/conf/all/send_redirects', 0],
        ['net/ipv4/conf/default/send_redirects', 0],
        ['net/ipv4/conf/all/proxy_arp', 1],
        ['net/ipv6/conf/all/disable_ipv6', 1],
        ['net/ipv6/conf/default/disable_ipv6', 1],
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
      } catch (e) {
        rtr.close();
        throw e;
      } finally {
        inet.close();
      }
      const router = new VpcRouter(rtr, opts.routerNetns, gateways);
      nftApply(op, opts.routerNetns, [...nftBase(opts.vpcCidrs), ...router.#ownership()]);
      return router;
    });
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
        ifname: req.ifname,
        ipv4: { primary: req.ipv4.primary, secondaries: [], prefixes: [] },
        sourceDestCheck: req.sourceDestCheck,
        isPublic: req.isPublic,
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
        nftApply('router.plug', this.#routerNetns, [
          ...nftEniUpsert(link, ownedDestinations(eni.ipv4), eni.sourceDestCheck, true),
          ...this.#ownership(),
        ]);
      } catch (e) {
        this.#enis.delete(req.eniId);
        ignoring(['ENODEV'], () => this.#rtr.linkDel(link));
        throw e;
      }
      return eni;
    });
  }

  /** Brings routes and checks of a plugged ENI in step with its addresses (no-op when unchanged). */
  update(eniId: string, ipv4: EniIpv4, sourceDestCheck: boolean): void {
    this.#open('router.update');
    const eni = this.#enis.get(eniId);
    if (!eni) return;
    const before = ownedDestinations(eni.ipv4).join(',');
    if (before === ownedDestinations(ipv4).join(',') && sourceDestCheck === eni.sourceDestCheck) return;
    dataplane('router.update', () => {
      this.#routes(eni, ipv4);
      eni.ipv4 = ipv4;
      eni.sourceDestCheck = sourceDestCheck;
      nftApply('router.update', this.#routerNetns, [
        ...nftEniUpsert(eni.link, ownedDestinations(ipv4), sourceDestCheck, false),
        ...this.#ownership(),
      ]);
    });
  }

  /** Unplugs an ENI: deletes its veth (both ends) and its checks. No-op for an unknown ENI. */
  unplug(eniId: string): void {
    this.#open('router.unplug');
    const eni = this.#enis.get(eniId);
    if (!eni) return;
    dataplane('router.unplug', () => {
      ignoring(['ENODEV'], () => this.#rtr.linkDel(eni.link));
      this.#enis.delete(eniId);
      nftApply('router.unplug', this.#routerNetns, [...nftEniRemove(eni.link), ...this.#ownership()]);
    });
  }

  /** The address map and the drop counters (reads the kernel's counters now). */
  view(): RouterView {
    this.#open('router.view');
    const counters = nftCounters('router.view', this.#routerNetns, NFT_TABLE);
    const drops = Object.fromEntries(DROP_REASONS.map((r) => [r, 0])) as Record<DropReason, number>;
    const byEni: Record<string, number> = {};
    for (const [name, packets] of counters) {
      if (name.startsWith('sdc_')) {
        const eniId = this.#linkOwners.get(name.slice(4));
        drops['source-dest-check'] += packets;
        if (eniId !== undefined) byEni[eniId] = (byEni[eniId] ?? 0) + packets;
      }
    }
    for (const [reason, name] of Object.entries(REASON_COUNTERS)) {
      drops[reason as DropReason] = counters.get(name) ?? 0;
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
    }
    return {
      addresses,
      drops,
      sourceDestCheckDropsByEni: byEni,
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
        const [base, len] = d.split('/');
        const b = parseIpv4(base!)!;
        const size = 2 ** (32 - Number(len));
        if (n >= b && n < b + size) return e.instanceId;
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
