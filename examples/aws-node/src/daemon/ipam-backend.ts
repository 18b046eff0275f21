import {
  type AssignResult,
  type Datastore,
  isDatastoreError,
  type PendingChange,
} from '@vpc-cni-kit/datastore';
import {
  branchHostVethName,
  isRoutingError,
  validateIfName,
  validateVethPrefix,
} from '@vpc-cni-kit/routing-table';
import type { SgpError } from '@vpc-cni-kit/sgp-branch';
import { BRANCH_FAILURES, type BranchCause } from '../rpc/branch-failures.js';
import { GrpcStatus } from '../rpc/grpc-client.js';
import { type CniBackend, RpcStatusError } from '../rpc/grpc-server.js';
import {
  type AddFailure,
  AddFailureCode,
  type AddNetworkReply,
  type AddNetworkRequest,
  type DelNetworkReply,
  type DelNetworkRequest,
} from '../rpc/messages.js';
import { type BranchPods, isBranchCause, type ResolvedBranch } from './branch-pods.js';
import { checkClientVersion } from './client-version.js';
import type { Logger } from './logger.js';
import type { NetnsCheck } from './netns-guard.js';
import { addFieldsProblem, clipped, delFieldsProblem } from './request-fields.js';

/** Daemon-side pod plumbing (routing-table's setup/teardown in production, a recorder in tests). */
export interface PodPlumber {
  /** Creates the veth, pod addresses/routes/neighbour and host routes/rules. */
  setup(pod: PlumbRequest): Promise<{ hostVeth: string; hostMac: string }>;
  /** Removes the host routes and rules (the veth goes with the pod's namespace). Tolerates what is gone. */
  teardown(pod: { podIp: string; hostVeth: string; eniTable: number }): Promise<void>;
  /** The host veth name for a pod (prefix + SHA-1 of "namespace.name"). */
  hostVethName(prefix: string, namespace: string, name: string): string;
}

/** What {@link PodPlumber.setup} needs. */
export interface PlumbRequest {
  podIp: string;
  hostVeth: string;
  containerIf: string;
  netnsPath: string;
  mtu: number;
  eniTable: number;
}

/** Why the pool could not serve an address, for the failure cause a plugin reports. */
export interface PoolCondition {
  /** The last ENI allocation failed because the subnet is full (within the back-off window). */
  subnetExhausted: boolean;
  /** No room for another ENI and every address is in use. */
  eniLimitReached: boolean;
  /** Custom networking: why the node's ENIConfig cannot be used (missing, invalid), if that stops new ENIs. */
  eniConfigProblem?: string | undefined;
}

/** Observations the backend reports (metrics). */
export interface BackendObserver {
  /** An AddNetwork ended; `branch` for a branch-ENI pod (no pool address: the warm pool does not count it). */
  addNetwork(durationMs: number, outcome: 'success' | AddFailure, branch?: boolean): void;
  /** A DelNetwork was asked; `branch` for a branch-ENI pod this daemon plumbed. */
  delNetwork(reason: string, branch?: boolean): void;
  noAvailableAddress(): void;
  /** A branch pod (security groups for pods) failed at `fn` (`awscni_pod_eni_error_count`). */
  podEniError?(fn: string): void;
}

/** Everything the backend depends on. */
export interface IpamBackendDeps {
  datastore: Datastore;
  plumber: PodPlumber;
  log: Logger;
  observer: BackendObserver;
  /** The daemon's version; a non-empty ClientVersion must equal it (the reference compares strictly). */
  version: string;
  vethPrefix: string;
  podMtu: number;
  /** VPC CIDRs plus exclusions, for the reply's VPCv4CIDRs (IPv4 mode). */
  vpcCidrs: () => readonly string[];
  /**
   * The address family pods get (default 4). In IPv6 mode replies carry `IPv6Addr` and `VPCv6CIDRs` (from
   * {@link IpamBackendDeps.vpcIpv6Cidrs}) and no IPv4 fields, as the reference's do.
   */
  family?: 4 | 6;
  /** The VPC's IPv6 blocks, for the reply's VPCv6CIDRs (IPv6 mode). */
  vpcIpv6Cidrs?: () => readonly string[];
  externalSnat: boolean;
  shuttingDown: () => boolean;
  poolCondition: () => PoolCondition;
  /**
   * Asks the pool loop for a pass soon: the pool just ran dry, an address was taken (the warm pool may
   * need topping up) or one was released (it may need shrinking).
   */
  wakePool: () => void;
  /** Monotonic milliseconds, for latency. */
  now: () => number;
  /**
   * Refuses a pod namespace the daemon must not plumb (see {@link netnsGuard}: the node's own, a relative or
   * missing path). Asked before anything is assigned.
   */
  checkNetns: NetnsCheck;
  /** Told of every failed AddNetwork, with its failure code and cause (the daemon's recent-failures ring). */
  onAddFailure?: (failure: { code: AddFailure; message: string; pod: string }) => void;
  /**
   * Security groups for pods (`ENABLE_POD_ENI`): pods with a branch ENI get its address and a branch link
   * instead of a pool address. Absent: every pod gets a pool address.
   */
  branchPods?: BranchPods;
  /** Told of every branch cause that failed a pod (the daemon writes it as an Event on the pod). */
  onBranchFailure?: (failure: {
    cause: BranchCause;
    message: string;
    pod: { namespace: string; name: string };
  }) => void;
}

const MULTI_NIC_UNSUPPORTED = 'multi-NIC attachments are not supported (ENABLE_MULTI_NIC)';

/** The lowest and highest pod MTU a request may ask for (as `POD_MTU`). */
const POD_MTU_RANGE = [576, 9001] as const;

/**
 * Everything wrong with an AddNetwork request that can be known before an address is taken, or `undefined`.
 * A request refused here changes nothing: no address, no checkpoint write, no link.
 */
function addRequestProblem(req: AddNetworkRequest, deps: IpamBackendDeps): string | undefined {
  // With security groups for pods a branch pod's multi-NIC request is ignored (the reference): decided once the
  // pod is known.
  if (req.RequiresMultiNICAttachment && deps.branchPods === undefined) return MULTI_NIC_UNSUPPORTED;
  // Even when the plugin plumbs (PodPlumbing false), an address is never handed out for the node's own namespace.
  if (!req.PodPlumbing) return req.Netns === '' ? undefined : deps.checkNetns(req.Netns);
  const [low, high] = POD_MTU_RANGE;
  if (req.Mtu !== 0 && (!Number.isInteger(req.Mtu) || req.Mtu < low || req.Mtu > high))
    return `Mtu must be 0 (the daemon's POD_MTU) or ${low}–${high}, got ${req.Mtu}`;
  try {
    validateIfName(req.IfName, 'IfName');
    if (req.VethPrefix !== '') validateVethPrefix(req.VethPrefix);
  } catch (e) {
    if (isRoutingError(e)) return e.message;
    throw e;
  }
  return deps.checkNetns(req.Netns);
}

function checkVersion(
  deps: IpamBackendDeps,
  clientVersion: string,
  pod?: { namespace: string; name: string },
): void {
  try {
    checkClientVersion(deps.version, clientVersion);
  } catch (e) {
    if (pod !== undefined && deps.branchPods !== undefined && pod.name !== '') {
      deps.observer.podEniError?.('validateVersion');
      deps.onBranchFailure?.({
        cause: 'VERSION_MISMATCH',
        message: `aws-cni ${JSON.stringify(clientVersion)} != aws-node ${JSON.stringify(deps.version)}`,
        pod,
      });
    }
    throw e;
  }
}

/** One address as the reply's `IPAllocationMetadata` carries it, in its family's field. */
function allocationOf(
  family: 4 | 6,
  a: { address: string; deviceNumber: number; routeTableId: number },
): AddNetworkReply['IPAllocationMetadata'][number] {
  return {
    IPv4Addr: family === 4 ? a.address : '',
    IPv6Addr: family === 6 ? a.address : '',
    DeviceNumber: a.deviceNumber,
    RouteTableId: a.routeTableId,
  };
}

/** The `rpc.CNIBackend` implementation over the datastore and the pod plumber. */
export function ipamBackend(deps: IpamBackendDeps): CniBackend {
  const { datastore, log } = deps;
  const family = deps.family ?? 4;

  async function addNetwork(req: AddNetworkRequest): Promise<Partial<AddNetworkReply>> {
    const started = deps.now();
    let branch = false;
    // Security groups for pods: how long reading the pod (and the trunk) took, for the log (ADR 0016).
    let resolveMs: number | undefined;
    // Checked first: until they are, the pod's names may be anything (a megabyte), so a failure keeps them clipped.
    const fieldsProblem = addFieldsProblem(req);
    const fail = (code: AddFailure, message: string): Partial<AddNetworkReply> => {
      deps.observer.addNetwork(deps.now() - started, code, branch);
      const pod = `${clipped(req.K8S_POD_NAMESPACE)}/${clipped(req.K8S_POD_NAME)}`;
      deps.onAddFailure?.({ code, message, pod });
      log.warn('AddNetwork failed', { failure: code, message, containerID: clipped(req.ContainerID), pod });
      return { Success: false, FailureCode: code, FailureMessage: message };
    };
    if (fieldsProblem !== undefined) return fail(AddFailureCode.InvalidRequest, fieldsProblem);
    const podRef = { namespace: req.K8S_POD_NAMESPACE, name: req.K8S_POD_NAME };
    checkVersion(deps, req.ClientVersion, podRef);
    const problem = addRequestProblem(req, deps);
    if (problem !== undefined) return fail(AddFailureCode.InvalidRequest, problem);
    if (deps.shuttingDown()) return fail(AddFailureCode.ShuttingDown, 'the daemon is terminating');

    const key = { networkName: req.NetworkName, containerID: req.ContainerID, ifName: req.IfName };
    if (deps.branchPods !== undefined) {
      let resolved: ResolvedBranch | undefined;
      try {
        const t = deps.now();
        resolved = await deps.branchPods.resolve(podRef.namespace, podRef.name);
        resolveMs = Math.round((deps.now() - t) * 1000) / 1000;
      } catch (e) {
        if (!isBranchCause(e))
          return fail(AddFailureCode.Internal, e instanceof Error ? e.message : String(e));
        return failBranch(e);
      }
      if (resolved !== undefined) {
        branch = true;
        if (req.RequiresMultiNICAttachment)
          log.info('multi-NIC attachment ignored for a branch-ENI pod', {
            pod: `${podRef.namespace}/${podRef.name}`,
          });
        return addBranch(resolved);
      }
      if (req.RequiresMultiNICAttachment) return fail(AddFailureCode.InvalidRequest, MULTI_NIC_UNSUPPORTED);
    }

    function failBranch(e: SgpError): Partial<AddNetworkReply> {
      const cause = e.code as BranchCause;
      deps.observer.podEniError?.(`AddNetwork.${e.code}`);
      deps.onBranchFailure?.({ cause, message: e.message, pod: podRef });
      return fail(BRANCH_FAILURES[cause].failure ?? AddFailureCode.Internal, e.message);
    }

    async function addBranch(resolved: ResolvedBranch): Promise<Partial<AddNetworkReply>> {
      const branchPods = deps.branchPods!;
      const reply: Partial<AddNetworkReply> = {
        Success: true,
        // The reference's shape for a branch pod: no device, route table id device + 1 = 0.
        IPAllocationMetadata: [{ IPv4Addr: resolved.podIp, IPv6Addr: '', DeviceNumber: -1, RouteTableId: 0 }],
        UseExternalSNAT: deps.externalSnat,
        VPCv4CIDRs: [...deps.vpcCidrs()],
        PodVlanId: resolved.branch.vlanId,
        PodENIMAC: resolved.branch.mac,
        PodENISubnetGW: resolved.gateway,
        ParentIfIndex: resolved.trunk.index,
      };
      if (req.PodPlumbing) {
        try {
          const hostVeth = branchHostVethName(
            branchPods.mode,
            req.VethPrefix || deps.vethPrefix,
            podRef.namespace,
            podRef.name,
          );
          const plan = branchPods.plan(resolved, hostVeth);
          const done = await branchPods.plumb(
            key,
            { ...podRef, netnsPath: req.Netns, mtu: req.Mtu > 0 ? req.Mtu : deps.podMtu },
            resolved,
            plan,
          );
          Object.assign(reply, { PodPlumbed: true, HostVethName: hostVeth, HostVethMac: done.hostMac });
        } catch (e) {
          deps.observer.podEniError?.('setupBranchPod');
          if (isBranchCause(e)) return failBranch(e);
          return fail(AddFailureCode.PlumbingFailed, e instanceof Error ? e.message : String(e));
        }
      }
      const durationMs = deps.now() - started;
      deps.observer.addNetwork(durationMs, 'success', true);
      log.info('AddNetwork (branch ENI)', {
        resolveMs,
        containerID: req.ContainerID,
        pod: `${podRef.namespace}/${podRef.name}`,
        address: resolved.podIp,
        branchEni: resolved.branch.eniId,
        vlanId: resolved.branch.vlanId,
        trunk: resolved.trunk.name,
        durationMs: Math.round(durationMs * 1000) / 1000,
      });
      return reply;
    }
    // The address is taken in memory at once; its checkpoint is written in the background (group commit)
    // while the pod is plumbed. Success is replied only once that checkpoint is durable.
    let pending: PendingChange<AssignResult>;
    try {
      pending = datastore.assignPending(key, {
        namespace: req.K8S_POD_NAMESPACE,
        name: req.K8S_POD_NAME,
        interfacesCount: 1,
      });
    } catch (e) {
      if (isDatastoreError(e) && e.code === 'NoAvailableAddress') {
        deps.observer.noAvailableAddress();
        deps.wakePool();
        const cond = deps.poolCondition();
        if (cond.subnetExhausted)
          return fail(AddFailureCode.SubnetExhausted, 'EC2 reported the subnet out of free addresses');
        if (cond.eniConfigProblem !== undefined)
          return fail(AddFailureCode.EniConfigUnavailable, cond.eniConfigProblem);
        if (cond.eniLimitReached)
          return fail(
            AddFailureCode.EniLimitReached,
            'all ENIs this instance may have are attached and full',
          );
        return fail(AddFailureCode.PoolEmpty, 'no free address in the datastore; the pool is being grown');
      }
      return fail(AddFailureCode.Internal, e instanceof Error ? e.message : String(e));
    }
    const assigned = pending.result;
    // Handled below; marked handled now so a failed write during plumbing is never an unhandled rejection.
    pending.durable.catch(() => undefined);

    const reply: Partial<AddNetworkReply> = {
      Success: true,
      IPAllocationMetadata: [allocationOf(family, assigned)],
      ...(family === 4
        ? { UseExternalSNAT: deps.externalSnat, VPCv4CIDRs: [...deps.vpcCidrs()] }
        : { UseExternalSNAT: false, VPCv6CIDRs: [...(deps.vpcIpv6Cidrs?.() ?? [])] }),
    };
    if (req.PodPlumbing) {
      let hostVeth = '';
      try {
        hostVeth = deps.plumber.hostVethName(
          req.VethPrefix || deps.vethPrefix,
          req.K8S_POD_NAMESPACE,
          req.K8S_POD_NAME,
        );
        const done = await deps.plumber.setup({
          podIp: assigned.address,
          hostVeth,
          containerIf: req.IfName,
          netnsPath: req.Netns,
          mtu: req.Mtu > 0 ? req.Mtu : deps.podMtu,
          eniTable: assigned.routeTableId,
        });
        Object.assign(reply, { PodPlumbed: true, HostVethName: done.hostVeth, HostVethMac: done.hostMac });
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        // Roll back: nothing of this pod may stay behind, and the address goes back to the pool.
        if (hostVeth !== '')
          await deps.plumber
            .teardown({ podIp: assigned.address, hostVeth, eniTable: assigned.routeTableId })
            .catch(() => undefined);
        await releaseAfterFailedAdd(key, pending, assigned.address);
        return fail(AddFailureCode.PlumbingFailed, message);
      }
    }
    try {
      await pending.durable;
    } catch (e) {
      // The datastore has undone the assignment (the address is free again): undo the plumbing too.
      if (reply.PodPlumbed) {
        await deps.plumber
          .teardown({
            podIp: assigned.address,
            hostVeth: reply.HostVethName!,
            eniTable: assigned.routeTableId,
          })
          .catch(() => undefined);
      }
      return fail(
        AddFailureCode.Internal,
        `the IPAM checkpoint could not be written: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    const durationMs = deps.now() - started;
    deps.observer.addNetwork(durationMs, 'success');
    log.info('AddNetwork', {
      ...(resolveMs !== undefined ? { resolveMs } : {}),
      containerID: req.ContainerID,
      pod: `${req.K8S_POD_NAMESPACE}/${req.K8S_POD_NAME}`,
      address: assigned.address,
      eni: assigned.eniId,
      durationMs: Math.round(durationMs * 1000) / 1000,
    });
    // A warm address was used: top the pool up now rather than at the next periodic pass (the pass runs
    // after the pool loop's wake delay, off this reply's path).
    deps.wakePool();
    return reply;
  }

  /**
   * Rolls back the assignment of a failed ADD. Its release need not be durable before the failure is
   * replied (a checkpoint still listing the address only keeps it out of use), but it is awaited so the log
   * says what happened.
   */
  async function releaseAfterFailedAdd(
    key: { networkName: string; containerID: string; ifName: string },
    assignedChange: PendingChange<AssignResult>,
    address: string,
  ): Promise<void> {
    try {
      // If the assignment's own write failed, the datastore has already undone it.
      await assignedChange.durable.catch(() => undefined);
      if (datastore.findByPod(key)?.address !== address) return;
      await datastore.unassignPending(key).durable;
    } catch (u) {
      log.error('rollback of a failed ADD could not release the address', { address, error: String(u) });
    }
  }

  async function delNetwork(req: DelNetworkRequest): Promise<Partial<DelNetworkReply>> {
    const problem = delFieldsProblem(req);
    if (problem !== undefined) throw new RpcStatusError(GrpcStatus.INVALID_ARGUMENT, problem);
    checkVersion(deps, req.ClientVersion);
    const key = { networkName: req.NetworkName, containerID: req.ContainerID, ifName: req.IfName };
    if (deps.branchPods !== undefined) {
      // A branch pod this daemon plumbed: its address is the branch ENI's (the controller's), not the pool's.
      let branch: Awaited<ReturnType<BranchPods['release']>>;
      try {
        branch = await deps.branchPods.release(key);
      } catch (e) {
        deps.observer.delNetwork(req.Reason || 'PodDeleted', true);
        deps.observer.podEniError?.('teardownBranchPod');
        throw new RpcStatusError(GrpcStatus.INTERNAL, e instanceof Error ? e.message : String(e));
      }
      if (branch !== undefined) {
        deps.observer.delNetwork(req.Reason || 'PodDeleted', true);
        log.info('DelNetwork (branch ENI)', {
          containerID: req.ContainerID,
          reason: req.Reason,
          address: branch.address,
          vlanId: branch.vlanId,
        });
        return {
          Success: true,
          IPAllocationMetadata: [
            { IPv4Addr: branch.address, IPv6Addr: '', DeviceNumber: -1, RouteTableId: 0 },
          ],
          PodVlanId: branch.vlanId,
        };
      }
    }
    deps.observer.delNetwork(req.Reason || 'PodDeleted');
    let released: ReturnType<Datastore['unassign']>;
    try {
      // Wait for the durable release before tearing anything down: a failed write puts the address back
      // with the pod, whose plumbing is then still intact (the runtime retries the DEL).
      released = await datastore.unassignPending(key).durable;
    } catch (e) {
      // An unknown pod is already deleted: DEL is idempotent.
      if (isDatastoreError(e) && e.code === 'UnknownPod') return { Success: true, IPAllocationMetadata: [] };
      throw new RpcStatusError(GrpcStatus.INTERNAL, e instanceof Error ? e.message : String(e));
    }
    if (req.PodPlumbing) {
      const hostVeth = deps.plumber.hostVethName(deps.vethPrefix, req.K8S_POD_NAMESPACE, req.K8S_POD_NAME);
      await deps.plumber
        .teardown({ podIp: released.address, hostVeth, eniTable: released.routeTableId })
        .catch((e: unknown) => {
          log.warn('pod teardown left something behind', { address: released.address, error: String(e) });
        });
    }
    deps.wakePool();
    log.info('DelNetwork', { containerID: req.ContainerID, reason: req.Reason, address: released.address });
    return { Success: true, IPAllocationMetadata: [allocationOf(family, released)] };
  }

  return { addNetwork, delNetwork };
}
