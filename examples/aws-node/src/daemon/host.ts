import { randomBytes } from 'node:crypto';
import type { ImdsEni } from '@vpc-cni-kit/eni-manager';
import { type NetlinkHandle, type NetlinkHandleSync, open, openSync } from '@vpc-cni-kit/netlink';
import {
  hostVethName,
  netlinkPortFactory,
  netlinkRoutingPort,
  planEni,
  type RoutingPlan,
  type RoutingPort,
  type RoutingPortFactory,
  reconcileRouting,
  setupPodNetwork,
  teardownPodNetwork,
  teardownRouting,
} from '@vpc-cni-kit/routing-table';
import {
  applyBranchNode,
  type BranchNodePlan,
  netlinkBranchLinkPort,
  setupBranchPod,
  teardownBranchNetwork,
} from '@vpc-cni-kit/sgp-branch';
import type { BranchPlumber } from './branch-pods.js';
import type { PodPlumber } from './ipam-backend.js';

/** The host (the daemon's own network namespace) as the daemon changes it, over one netlink handle. */
export interface Host {
  plumber: PodPlumber;
  /** The name of the link with this MAC, waiting up to `timeoutMs` for a hot-plugged ENI to appear. */
  linkByMac(mac: string, timeoutMs?: number): Promise<string>;
  /** Names of the host's links. */
  linkNames(): Promise<Set<string>>;
  setMtu(name: string, mtu: number): Promise<void>;
  /** Brings a link up (a pod's host veth left down by a daemon killed mid-plumbing). */
  setUp(name: string): Promise<void>;
  /** Routing for a secondary ENI: address, table routes, `from <ENI IP>` rule at 32765. */
  setupEni(eni: ImdsEni, mtu: number): Promise<RoutingPlan>;
  teardownEni(plan: RoutingPlan): Promise<void>;
  reconcile(plan: RoutingPlan): Promise<number>;
  /** Branch-pod plumbing (security groups for pods), on the same handles as {@link Host.plumber}. */
  branchPlumber: BranchPlumber;
  /** Applies the node-wide branch settings (`tcp_early_demux`, the `local` rule's priority). */
  applyBranchNode(plan: BranchNodePlan): Promise<void>;
  /** The host links with their index and MAC. */
  links(): Promise<{ name: string; index: number; mac: string }[]>;
  /**
   * The host side of standard-mode branch pods already on the node (a from-pod rule at 1536 into a table
   * `vlanId+100` whose `vlan.eth.<vlanId>` link exists, and the main route to the pod): kept by the start-up
   * routing reconcile, whose scope owns every rule at 512 and 1536.
   */
  standardBranchPods(): Promise<{ podIp: string; hostVeth: string; table: number }[]>;
  close(): void;
}

/** One turn of the event loop: the I/O callbacks already due run first. */
const loopTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Pod plumbing over sync handles never leaves the event loop on its own, so the checkpoint write that an
 * AddNetwork waits for (a chain of thread-pool steps: the flushed write, the rename, the directory fsync, each
 * dispatched from a callback) would stand still until the plumbing ends. These ports give the loop a turn at
 * three points (after the veth is made, once the pod namespace is open, before the host route), so the
 * chain advances while the pod is plumbed. Exported for tests.
 */
export function yieldingPorts(host: RoutingPort, namespaces: RoutingPortFactory) {
  return {
    host: {
      list: (kind, family) => host.list(kind, family),
      add: (object) => host.add(object),
      remove: (object) => host.remove(object),
      links: () => host.links(),
      setLink: (name, change) => host.setLink(name, change),
      setSysctl: (key, value) => host.setSysctl(key, value),
      async addVeth(spec) {
        await host.addVeth(spec);
        await loopTurn();
      },
      async replace(object) {
        await loopTurn();
        await host.replace(object);
      },
    } satisfies RoutingPort,
    namespaces: {
      async open(path) {
        const port = await namespaces.open(path);
        await loopTurn();
        return port;
      },
    } satisfies RoutingPortFactory,
  };
}

/**
 * Runs work for one key after the work already queued for it (pod plumbing yields mid-way, so two requests
 * for the same host veth, a retried ADD say, must not interleave). Keys leave the map when idle. Exported for
 * tests.
 */
export function keyedQueue() {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const run = (tails.get(key) ?? Promise.resolve()).then(work, work);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
}

/** Options for {@link openHost}. */
export interface HostOptions {
  /**
   * Give the event loop turns during pod plumbing ({@link yieldingPorts}): needed when the checkpoint an
   * AddNetwork waits for is written on the thread pool, useless (other work only lengthens the ADD) when it
   * is written in the call. Default `true`.
   */
  yieldDuringPlumbing?: boolean;
}

/**
 * Opens the daemon's host. Two handles: an async one for ENI work and link deletes (17–35 ms in the kernel,
 * kept off the event loop), and a sync one for pod plumbing, whose operations are all sub-millisecond (the veth
 * peer is created directly in the pod namespace, never moved): measured 1.9 ms per pod over the sync handle
 * against 4.3 ms over the async one (docs/benchmarks.md). Pod namespaces are opened with sync handles too.
 */
export async function openHost(options: HostOptions = {}): Promise<Host> {
  const handle: NetlinkHandle = await open();
  const port = netlinkRoutingPort(handle);
  const podHandle: NetlinkHandleSync = openSync();
  const podPort = netlinkRoutingPort(podHandle);
  const podNamespaces = netlinkPortFactory({ sync: true });
  const plumbing =
    options.yieldDuringPlumbing === false
      ? { host: podPort, namespaces: podNamespaces }
      : yieldingPorts(podPort, podNamespaces);
  const random = (n: number) => randomBytes(n);
  const perVeth = keyedQueue();

  async function linkByMac(mac: string, timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const link = (await handle.linkList()).find((l) => l.address?.toLowerCase() === mac.toLowerCase());
      if (link !== undefined) return link.name;
      if (Date.now() > deadline) throw new Error(`no link with MAC ${mac} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  return {
    plumber: {
      async setup(pod) {
        // No host link dump per pod (its cost grows with the pods on the node): the MAC is random, as the
        // reference's kernel-chosen one is, and a leftover veth is replaced when creating the pair says EEXIST.
        const plan = await perVeth(pod.hostVeth, () =>
          setupPodNetwork({ ...plumbing, random, uniqueMac: false }, pod),
        );
        return { hostVeth: plan.veth.name, hostMac: plan.veth.mac };
      },
      teardown: (pod) => perVeth(pod.hostVeth, () => teardownPodNetwork(podPort, pod)),
      hostVethName: (prefix, namespace, name) => hostVethName(prefix, namespace, name),
    },
    linkByMac,
    async linkNames() {
      return new Set((await handle.linkList()).map((l) => l.name));
    },
    async setMtu(name, mtu) {
      await handle.linkSet(name, { mtu, up: true });
    },
    async setUp(name) {
      await handle.linkSet(name, { up: true });
    },
    async setupEni(eni, mtu) {
      const interfaceName = await linkByMac(eni.mac);
      const plan = planEni({
        interfaceName,
        deviceNumber: eni.deviceNumber,
        networkCard: eni.networkCard,
        primaryIp: eni.ipv4Addresses[0] ?? '',
        subnetCidr: eni.subnetIpv4Cidr,
        mtu,
      });
      await reconcileRouting(port, plan);
      return plan;
    },
    teardownEni: (plan) => teardownRouting(port, plan),
    branchPlumber: {
      async setup(plan, pod) {
        const made = await perVeth(plan.hostVeth, () =>
          setupBranchPod(
            { ...plumbing, links: netlinkBranchLinkPort(podHandle), random, uniqueMac: false },
            pod,
            plan,
          ),
        );
        return { hostMac: made.veth.mac };
      },
      teardown: (plan) => perVeth(plan.hostVeth, () => teardownBranchNetwork(podPort, plan)),
    },
    applyBranchNode: (plan) => applyBranchNode(port, plan),
    async links() {
      return (await handle.linkList()).map((l) => ({
        name: l.name,
        index: l.index,
        mac: (l.address ?? '').toLowerCase(),
      }));
    },
    async standardBranchPods() {
      const names = new Set((await handle.linkList()).map((l) => l.name));
      const rules = await port.list('rule', 4);
      const routes = await port.list('route', 4);
      const out: { podIp: string; hostVeth: string; table: number }[] = [];
      for (const r of rules) {
        if (r.priority !== 1536 || r.from === undefined || r.table <= 100 || r.table > 4194) continue;
        if (!names.has(`vlan.eth.${r.table - 100}`)) continue;
        const route = routes.find((x) => x.table === 254 && x.dst === r.from && x.dev !== undefined);
        if (route?.dev !== undefined)
          out.push({ podIp: r.from.replace(/\/32$/, ''), hostVeth: route.dev, table: r.table });
      }
      return out;
    },
    async reconcile(plan) {
      return (await reconcileRouting(port, plan)).changes;
    },
    close: () => {
      handle.close();
      podHandle.close();
    },
  };
}
