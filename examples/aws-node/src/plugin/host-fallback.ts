/**
 * Host-side work the plugin does itself, only on rare paths: DEL while the daemon is down, and CHECK. The
 * netlink stack (and koffi's native module) loads only here, never on the ADD/DEL fast path.
 */
import { CniError, CniErrorCode } from '@vpc-cni-kit/cni-spec';
import type { PrevResultBranchPod, PrevResultPod } from './result.js';

/** What a failed verification says: the objects missing, else the message. */
function why(e: unknown, rt: typeof import('@vpc-cni-kit/routing-table')): string {
  if (rt.isRoutingError(e, 'VERIFY_FAILED') && e.missing.length > 0) return `missing ${e.missing.join('; ')}`;
  return e instanceof Error ? e.message : String(e);
}

async function hostPort() {
  const [{ openSync }, rt] = await Promise.all([
    import('@vpc-cni-kit/netlink'),
    import('@vpc-cni-kit/routing-table'),
  ]);
  const handle = openSync();
  return { rt, port: rt.netlinkRoutingPort(handle), close: () => handle.close() };
}

/** Removes the pod's host routes and rules (512, 1536, the main /32 route), tolerating what is gone. */
export async function teardownWithoutDaemon(pod: PrevResultPod): Promise<void> {
  const { rt, port, close } = await hostPort();
  try {
    await rt.teardownPodNetwork(port, {
      podIp: pod.address,
      hostVeth: pod.hostVethName ?? 'eni00000000000',
      eniTable: pod.routeTableId,
    });
  } finally {
    close();
  }
}

type RoutingTable = typeof import('@vpc-cni-kit/routing-table');

/** The pod side of CHECK (the same for every pod): the /32 on `ifname`, the gateway link route, the default route. */
async function verifyPodSide(
  rt: RoutingTable,
  plan: ReturnType<RoutingTable['planPodNetwork']>,
  netns: string,
  ifname: string,
): Promise<void> {
  const inPod = rt.emptyPlan(plan.family);
  const podPlan = {
    ...inPod,
    addresses: plan.podObjects.flatMap((o) => (o.kind === 'address' ? [o] : [])),
    routes: plan.podObjects.flatMap((o) => (o.kind === 'route' ? [o] : [])),
    rules: plan.podObjects.flatMap((o) => (o.kind === 'rule' ? [o] : [])),
  };
  const podPort = await rt.netlinkPortFactory({ sync: true }).open(netns);
  try {
    await rt.verifyRouting(podPort, podPlan);
  } catch (e) {
    throw new CniError(CniErrorCode.Internal, `check: pod ${ifname} in ${netns}: ${why(e, rt)}`);
  } finally {
    podPort.close();
  }
}

/**
 * CNI CHECK: what ADD made is all there. In the pod's namespace: the /32 address on `ifname`, the link route to
 * the gateway and the default route through it; on the host: the route to the pod through its veth and the
 * pod's rules (to-pod at 512, from-pod at 1536 for an address on a secondary ENI). Anything missing is an
 * `Internal` (999) error naming it, the code the reference's plugin reports for every failure.
 */
export async function verifyHost(pod: PrevResultPod, netns: string, ifname: string): Promise<void> {
  if (pod.hostVethName === undefined)
    throw new CniError(CniErrorCode.Internal, 'check: prevResult names no host veth');
  const { rt, port, close } = await hostPort();
  try {
    const plan = checkPlan(rt, pod.address, pod.hostVethName, netns, ifname, pod.routeTableId);
    await verifyPodSide(rt, plan, netns, ifname);
    await rt.verifyRouting(port, plan.host);
  } catch (e) {
    if (e instanceof CniError) throw e;
    throw new CniError(CniErrorCode.Internal, `check: node: ${why(e, rt)}`);
  } finally {
    close();
  }
}

/**
 * Tears a branch-ENI pod down from its prevResult (the reference's `TeardownBranchENIPodNetwork`, mode-agnostic):
 * the branch link, the prio-10 rules into its table, the IP-based rules and routes. Tolerates what is gone.
 */
export async function teardownBranchWithoutDaemon(pod: PrevResultBranchPod): Promise<void> {
  const [{ port, close }, sgp] = await Promise.all([hostPort(), import('@vpc-cni-kit/sgp-branch')]);
  try {
    await sgp.teardownBranchNetwork(
      port,
      sgp.planBranchTeardown({ vlanId: pod.vlanId, podIp: pod.address, hostVeth: pod.hostVethName }),
    );
  } finally {
    close();
  }
}

/**
 * The pod plan a CHECK compares the node against, rebuilt from what prevResult says. The neighbour entry (the host
 * veth's MAC) is not compared: the MAC placeholder only fills the plan.
 */
function checkPlan(
  rt: RoutingTable,
  podIp: string,
  hostVeth: string,
  netnsPath: string,
  containerIf: string,
  eniTable: number,
): ReturnType<RoutingTable['planPodNetwork']> {
  return rt.planPodNetwork(
    { podIp, hostVeth, containerIf, netnsPath, mtu: 1500, eniTable },
    '02:00:00:00:00:00',
  );
}

/**
 * CNI CHECK of a branch-ENI pod: the pod side as for any pod, and on the node its branch link
 * `vlan.eth.<vlanId>` and the rules of either mode (strict: `iif <hostVeth>` at 10 into table `vlanId+100`;
 * standard: `to <podIP>` at 512). Anything missing is an `Internal` (999) error naming it.
 */
export async function verifyBranch(pod: PrevResultBranchPod, netns: string, ifname: string): Promise<void> {
  const { rt, port, close } = await hostPort();
  try {
    const plan = checkPlan(rt, pod.address, pod.hostVethName, netns, ifname, pod.vlanId + 100);
    await verifyPodSide(rt, plan, netns, ifname);
    const link = `vlan.eth.${pod.vlanId}`;
    if (!(await port.links()).some((l) => l.name === link))
      throw new CniError(CniErrorCode.Internal, `check: node: missing branch link ${link}`);
    const table = pod.vlanId + 100;
    const rules = await port.list('rule', plan.family);
    const strict = rules.some((r) => r.priority === 10 && r.iif === pod.hostVethName && r.table === table);
    const standard = rules.some((r) => r.priority === 512 && r.to === `${pod.address}/32`);
    if (!strict && !standard)
      throw new CniError(
        CniErrorCode.Internal,
        `check: node: missing the rules of ${pod.address} (iif ${pod.hostVethName} at 10, or to it at 512)`,
      );
  } catch (e) {
    if (e instanceof CniError) throw e;
    throw new CniError(CniErrorCode.Internal, `check: node: ${why(e, rt)}`);
  } finally {
    close();
  }
}
