/**
 * Host-side work the plugin does itself, only on rare paths: DEL while the daemon is down, and CHECK. The
 * netlink stack (and koffi's native module) loads only here, never on the ADD/DEL fast path.
 */
import { CniError, CniErrorCode } from '@vpc-cni-kit/cni-spec';
import type { PrevResultPod } from './result.js';

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

/** CNI CHECK: the pod's host routes and rules are all present. */
export async function verifyHost(pod: PrevResultPod): Promise<void> {
  if (pod.hostVethName === undefined)
    throw new CniError(CniErrorCode.Internal, 'check: prevResult names no host veth');
  const { rt, port, close } = await hostPort();
  try {
    await rt.verifyRouting(
      port,
      rt.planPodHost({ podIp: pod.address, hostVeth: pod.hostVethName, table: pod.routeTableId }),
    );
  } catch (e) {
    throw new CniError(CniErrorCode.Internal, `check: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    close();
  }
}
