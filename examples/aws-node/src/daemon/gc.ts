import type { Datastore } from '@vpc-cni-kit/datastore';
import { GrpcStatus } from '../rpc/grpc-client.js';
import { RpcStatusError } from '../rpc/grpc-server.js';
import type { GcRequest, StatusReply } from '../rpc/messages.js';
import type { BranchPods } from './branch-pods.js';
import type { PodPlumber } from './ipam-backend.js';
import type { Logger } from './logger.js';

/** An attachment the runtime still uses. */
export interface LiveAttachment {
  readonly containerID: string;
  readonly ifName: string;
}

/** A CNI 1.1 GC request as the daemon serves it. */
export interface GcInput {
  /** The CNI network whose attachments are collected (others are not looked at). */
  readonly networkName: string;
  /** `cni.dev/valid-attachments`: every attachment the runtime still uses. */
  readonly valid: readonly LiveAttachment[];
  /** When the request was made (wall-clock ms): an address assigned since is never released. */
  readonly requestedAt: number;
}

/** What a GC did. */
export interface GcOutcome {
  /** Addresses released. */
  readonly released: string[];
  /** Stale attachments kept, and why (branch pods too). */
  readonly kept: { address: string; containerID: string; why: 'younger-than-request' | 'in-use' }[];
  /** Branch pods (security groups for pods) whose branch link, table routes and rules were removed. */
  readonly branches: { address: string; containerID: string; vlanId: number }[];
}

/** Everything {@link collectStaleAttachments} depends on. */
export interface GcDeps {
  readonly datastore: Datastore;
  readonly plumber: PodPlumber;
  readonly vethPrefix: string;
  /** Names of the host's links (a pod whose host veth exists is in use). */
  readonly hostLinks: () => Promise<Set<string>>;
  readonly log: Logger;
  /** Security groups for pods: the branch pods recorded (their plumbing is collected too). */
  readonly branchPods?: BranchPods | undefined;
}

/**
 * CNI 1.1 GC: releases the address of every attachment of `networkName` the runtime no longer lists, as a DEL
 * would (durably unassigned, then the host routes and rules removed), and removes the branch link, table and
 * rules of every such branch pod. Never one assigned after the request (an ADD racing the runtime's list), and
 * never one still in use (its pod's host veth exists: the pod's network is still plumbed, so only a DEL may take
 * it down).
 */
export async function collectStaleAttachments(deps: GcDeps, input: GcInput): Promise<GcOutcome> {
  const valid = new Set(input.valid.map((a) => `${a.containerID}\u0000${a.ifName}`));
  const links = await deps.hostLinks();
  const outcome: GcOutcome = { released: [], kept: [], branches: [] };
  for (const a of deps.datastore.assignments()) {
    if (a.key.networkName !== input.networkName) continue;
    if (valid.has(`${a.key.containerID}\u0000${a.key.ifName}`)) continue;
    if (a.assignedAt >= input.requestedAt) {
      outcome.kept.push({ address: a.address, containerID: a.key.containerID, why: 'younger-than-request' });
      continue;
    }
    const { namespace, name } = a.metadata;
    const hostVeth =
      namespace && name ? deps.plumber.hostVethName(deps.vethPrefix, namespace, name) : undefined;
    if (hostVeth !== undefined && links.has(hostVeth)) {
      outcome.kept.push({ address: a.address, containerID: a.key.containerID, why: 'in-use' });
      continue;
    }
    const released = await deps.datastore.unassignPending(a.key).durable;
    if (hostVeth !== undefined) {
      await deps.plumber
        .teardown({ podIp: released.address, hostVeth, eniTable: released.routeTableId })
        .catch((e: unknown) =>
          deps.log.warn('GC: pod teardown left something behind', {
            address: released.address,
            error: String(e),
          }),
        );
    }
    outcome.released.push(released.address);
  }
  if (deps.branchPods !== undefined) {
    const branches = await deps.branchPods.collect({
      networkName: input.networkName,
      valid,
      requestedAt: input.requestedAt,
      links,
    });
    for (const r of branches.collected)
      outcome.branches.push({ address: r.address, containerID: r.containerID, vlanId: r.vlanId });
    for (const k of branches.kept)
      outcome.kept.push({ address: k.record.address, containerID: k.record.containerID, why: k.why });
  }
  if (outcome.released.length + outcome.kept.length + outcome.branches.length > 0)
    deps.log.info('GC of stale attachments', {
      released: outcome.released,
      kept: outcome.kept,
      branches: outcome.branches,
    });
  return outcome;
}

/** Turns a `GcRequest` into a {@link GcInput}; a malformed one is `INVALID_ARGUMENT` and changes nothing. */
export function gcInputOf(req: GcRequest): GcInput {
  const bad = (why: string) => new RpcStatusError(GrpcStatus.INVALID_ARGUMENT, `GC: ${why}`);
  if (req.NetworkName === '') throw bad('NetworkName is required');
  if (!/^\d{1,15}$/.test(req.RequestedAtMs)) throw bad('RequestedAtMs must be wall-clock milliseconds');
  for (const a of req.ValidAttachments)
    if (a.ContainerID === '' || a.IfName === '')
      throw bad('every valid attachment needs ContainerID and IfName');
  return {
    networkName: req.NetworkName,
    valid: req.ValidAttachments.map((a) => ({ containerID: a.ContainerID, ifName: a.IfName })),
    requestedAt: Number(req.RequestedAtMs),
  };
}

/** What {@link podReadiness} looks at. */
export interface ReadinessInput {
  /** Addresses free now. */
  readonly free: number;
  /** The daemon provisions addresses (not IMDS-only, not `DISABLE_NETWORK_RESOURCE_PROVISIONING`). */
  readonly canProvision: boolean;
  /** The pool's last view: the subnet is full, or no room for another ENI. */
  readonly subnetExhausted: boolean;
  readonly eniLimitReached: boolean;
}

/** CNI 1.1 STATUS: not ready only when no address is free and the pool cannot get one. */
export function podReadiness(r: ReadinessInput): StatusReply {
  if (r.free > 0) return { Ready: true, Reason: '' };
  if (!r.canProvision)
    return {
      Ready: false,
      Reason: 'no free address, and this node provisions none (IMDS-only or provisioning disabled)',
    };
  if (r.subnetExhausted) return { Ready: false, Reason: 'no free address, and the subnet has none left' };
  if (r.eniLimitReached) return { Ready: false, Reason: 'no free address, and no room for another ENI' };
  return { Ready: true, Reason: '' };
}
