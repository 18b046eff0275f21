import {
  CniError,
  CniErrorCode,
  type CommandContext,
  type PluginHandlers,
  type Result,
} from '@vpc-cni-kit/cni-spec';
import { type Logger, silentLogger } from '../log/logger.js';
import { BRANCH_FAILURES, branchCauseOf } from '../rpc/branch-failures.js';
import { GrpcStatus, isGrpcCallError } from '../rpc/grpc-client.js';
import { AddFailureCode, ServingStatus } from '../rpc/messages.js';
import type { DaemonClient } from './daemon-client.js';
import { type AwsCniConf, readAwsCniConf } from './net-conf.js';
import {
  buildAddResult,
  buildBranchAddResult,
  type PrevResultBranchPod,
  type PrevResultPod,
  readBranchPrevResult,
  readPrevResult,
} from './result.js';

/** What the plugin's handlers need from the outside world, injected for tests. */
export interface PluginDeps {
  /** A daemon client for the configured socket. */
  daemon: (socketPath: string) => DaemonClient;
  /** Host-side teardown from a prevResult when the daemon cannot be reached (rules 512/1536, host route). */
  teardownWithoutDaemon: (pod: PrevResultPod) => Promise<void>;
  /**
   * Branch-ENI pod teardown from a prevResult (branch link, prio-10 rules, 512/1536 rules), when the daemon
   * did not tear it down itself (it is down, or it restarted since the ADD).
   */
  teardownBranchWithoutDaemon?: (pod: PrevResultBranchPod) => Promise<void>;
  /** Verifies the pod's and the host's plumbing for CHECK; throws a CniError when something is missing. */
  verify: (pod: PrevResultPod, netns: string, ifname: string) => Promise<void>;
  /** CHECK of a branch-ENI pod: its pod side, branch link and rules. */
  verifyBranch?: (pod: PrevResultBranchPod, netns: string, ifname: string) => Promise<void>;
  /** The plugin's version, compared by the daemon (the reference's `ClientVersion`). */
  version: string;
  /**
   * Opens the plugin log named by the conflist (`pluginLogFile`, `pluginLogLevel`): {@link openPluginLog} in
   * the executable. Default: no log.
   */
  openLog?: (file: string, level: string) => Logger;
  /** Wall-clock milliseconds, for the durations logged. Default `Date.now`. */
  now?: () => number;
}

/** Network name the reference uses when the conflist's name is absent. */
const NETWORK_NAME = 'aws-cni';

function podArgs(ctx: CommandContext) {
  const a = ctx.env.args;
  return {
    K8S_POD_NAME: a.podName ?? '',
    K8S_POD_NAMESPACE: a.podNamespace ?? '',
    K8S_POD_INFRA_CONTAINER_ID: a.podInfraContainerId ?? '',
  };
}

/**
 * Maps a failed call to the daemon onto a CNI error: unreachable, starting or slow daemons are "try again later"
 * (a starting daemon answers UNAVAILABLE and says so, ADR 0035).
 */
function daemonCallError(e: unknown, what: string, socket: string): CniError {
  if (isGrpcCallError(e)) {
    if (e.grpcStatus === GrpcStatus.UNAVAILABLE && e.connected) {
      return new CniError(CniErrorCode.TryAgainLater, `${what}: ${e.message}`, `UNAVAILABLE from ${socket}`);
    }
    if (e.grpcStatus === GrpcStatus.UNAVAILABLE) {
      return new CniError(
        CniErrorCode.TryAgainLater,
        `${what}: aws-node is not reachable at ${socket}`,
        e.message,
      );
    }
    if (e.grpcStatus === GrpcStatus.DEADLINE_EXCEEDED) {
      return new CniError(CniErrorCode.TryAgainLater, `${what}: aws-node did not answer in time`, e.message);
    }
    if (e.grpcStatus === GrpcStatus.FAILED_PRECONDITION) {
      // The daemon refuses a plugin of another version (the reference's ClientVersion check).
      const row = BRANCH_FAILURES.VERSION_MISMATCH;
      return new CniError(row.cniCode, `${what}: ${row.message}`, e.message);
    }
    return new CniError(CniErrorCode.Internal, `${what}: aws-node refused the call: ${e.message}`);
  }
  return new CniError(CniErrorCode.Internal, `${what}: ${e instanceof Error ? e.message : String(e)}`);
}

/** The daemon's failure causes → CNI errors with messages that name the cause. */
function addFailure(code: string, message: string): CniError {
  const cause = branchCauseOf(code);
  if (cause !== undefined) {
    const row = BRANCH_FAILURES[cause];
    return new CniError(row.cniCode, row.message, message);
  }
  switch (code) {
    case AddFailureCode.PoolEmpty:
      return new CniError(
        CniErrorCode.TryAgainLater,
        'no free IP address in the warm pool; aws-node is adding more',
        message,
      );
    case AddFailureCode.SubnetExhausted:
      return new CniError(CniErrorCode.TryAgainLater, 'the subnet has no free IP addresses left', message);
    case AddFailureCode.EniLimitReached:
      return new CniError(
        CniErrorCode.TryAgainLater,
        'every IP address on this node is in use and the instance has no room for another ENI',
        message,
      );
    case AddFailureCode.EniConfigUnavailable:
      return new CniError(
        CniErrorCode.TryAgainLater,
        "custom networking: the node's ENIConfig is not available, so aws-node creates no ENI for pods",
        message,
      );
    case AddFailureCode.ShuttingDown:
      return new CniError(CniErrorCode.TryAgainLater, 'aws-node is shutting down', message);
    case AddFailureCode.InvalidRequest:
      return new CniError(CniErrorCode.InvalidEnvironment, 'aws-node rejected the request', message);
    case AddFailureCode.PlumbingFailed:
      return new CniError(CniErrorCode.Internal, 'failed to set up the pod network', message);
    default:
      return new CniError(
        CniErrorCode.Internal,
        'failed to assign an IP address to the pod',
        message || code || undefined,
      );
  }
}

/** What identifies a request in the plugin log. */
function requestFields(ctx: CommandContext): Record<string, unknown> {
  return {
    containerID: ctx.env.containerId,
    netns: ctx.env.netns,
    ifName: ctx.env.ifname,
    pod: `${ctx.env.args.podNamespace ?? ''}/${ctx.env.args.podName ?? ''}`,
  };
}

/** Runs a command's body, logging how it ended (the failure's CNI code and message) and how long it took. */
async function logged<T>(
  log: Logger,
  what: string,
  ctx: CommandContext,
  now: () => number,
  body: () => Promise<T>,
  done: (value: T) => Record<string, unknown> = () => ({}),
): Promise<T> {
  const started = now();
  try {
    const value = await body();
    log.info(`${what} done`, {
      containerID: ctx.env.containerId,
      ...done(value),
      durationMs: now() - started,
    });
    return value;
  } catch (e) {
    log.error(`${what} failed`, {
      containerID: ctx.env.containerId,
      ...(e instanceof CniError ? { code: e.code, error: e.msg, details: e.details } : { error: String(e) }),
      durationMs: now() - started,
    });
    throw e;
  }
}

/** The `aws-cni` plugin's handlers. */
export function awsCniHandlers(deps: PluginDeps): PluginHandlers {
  const now = deps.now ?? Date.now;
  const openLog = (conf: { pluginLogFile: string; pluginLogLevel: string }): Logger =>
    deps.openLog?.(conf.pluginLogFile, conf.pluginLogLevel) ?? silentLogger;
  return {
    async add(ctx): Promise<Result> {
      const conf = readAwsCniConf(ctx.config);
      const log = openLog(conf);
      log.info('Received CNI add request', { ...requestFields(ctx), cniVersion: ctx.config.cniVersion });
      return logged(
        log,
        'add',
        ctx,
        now,
        () => add(ctx, conf, log),
        (result) => ({ address: result.ips?.[0]?.address, hostVeth: result.interfaces?.[0]?.name }),
      );
    },

    async del(ctx) {
      const conf = readAwsCniConf(ctx.config);
      const log = openLog(conf);
      log.info('Received CNI del request', requestFields(ctx));
      await logged(log, 'del', ctx, now, () => del(ctx, conf, log));
    },

    async check(ctx) {
      const conf = readAwsCniConf(ctx.config);
      const log = openLog(conf);
      log.debug('Received CNI check request', requestFields(ctx));
      await logged(log, 'check', ctx, now, () => check(ctx, conf));
    },

    async status(ctx) {
      const conf = readAwsCniConf(ctx.config);
      let reply: Awaited<ReturnType<DaemonClient['status']>>;
      try {
        const daemon = deps.daemon(conf.ipamdSocket);
        const status = await daemon.health();
        if (status !== ServingStatus.SERVING) throw new Error(`health status ${status}`);
        reply = await daemon.status({ ClientVersion: deps.version });
      } catch (e) {
        // STATUS answers only "not available" (50), but says why when the versions differ.
        if (isGrpcCallError(e) && e.grpcStatus === GrpcStatus.FAILED_PRECONDITION) {
          const row = BRANCH_FAILURES.VERSION_MISMATCH;
          throw new CniError(CniErrorCode.PluginNotAvailable, `status: ${row.message}`, e.message);
        }
        throw new CniError(
          CniErrorCode.PluginNotAvailable,
          'aws-node is not serving',
          e instanceof Error ? e.message : String(e),
        );
      }
      if (!reply.Ready) throw new CniError(CniErrorCode.PluginNotAvailable, `aws-node: ${reply.Reason}`);
    },

    // GC: the daemon releases the addresses of attachments the runtime no longer lists.
    async gc(ctx) {
      const conf = readAwsCniConf(ctx.config);
      const log = openLog(conf);
      const requestedAt = now();
      const valid = ctx.config.validAttachments ?? [];
      log.info('Received CNI gc request', { validAttachments: valid.length });
      try {
        const reply = await deps.daemon(conf.ipamdSocket).gc({
          NetworkName: ctx.config.name || NETWORK_NAME,
          ValidAttachments: valid.map((a) => ({ ContainerID: a.containerID, IfName: a.ifname })),
          RequestedAtMs: String(Math.floor(requestedAt)),
          ClientVersion: deps.version,
        });
        log.info('gc done', { released: reply.Released });
      } catch (e) {
        throw daemonCallError(e, 'gc', conf.ipamdSocket);
      }
    },
  };

  async function add(ctx: CommandContext, conf: AwsCniConf, log: Logger): Promise<Result> {
    const daemon = deps.daemon(conf.ipamdSocket);
    const common = {
      ...podArgs(ctx),
      IfName: ctx.env.ifname,
      NetworkName: ctx.config.name || NETWORK_NAME,
      ContainerID: ctx.env.containerId,
      ClientVersion: deps.version,
    };
    let reply: Awaited<ReturnType<DaemonClient['addNetwork']>>;
    try {
      reply = await daemon.addNetwork({
        ...common,
        Netns: ctx.env.netns,
        PodPlumbing: true,
        Mtu: conf.mtu,
        VethPrefix: conf.vethPrefix,
      });
    } catch (e) {
      throw daemonCallError(e, 'add', conf.ipamdSocket);
    }
    log.debug('AddNetwork reply', {
      success: reply.Success,
      failureCode: reply.FailureCode,
      ips: reply.IPAllocationMetadata,
      hostVeth: reply.HostVethName,
      podPlumbed: reply.PodPlumbed,
    });
    if (!reply.Success) throw addFailure(reply.FailureCode, reply.FailureMessage);
    const ip = reply.IPAllocationMetadata[0];
    // IPv4Addr, or IPv6Addr in IPv6 mode (the reference's plugin takes whichever is set).
    const address = ip?.IPv4Addr || ip?.IPv6Addr || '';
    if (ip === undefined || address === '' || !reply.PodPlumbed) {
      // A daemon that allocated but did not plumb (the reference's ipamd): give the address back.
      await daemon
        .delNetwork({ ...common, Reason: 'SetupNSFailed', PodPlumbing: true })
        .catch(() => undefined);
      throw new CniError(
        CniErrorCode.Internal,
        'aws-node did not set up the pod network',
        ip === undefined
          ? 'no address in the reply'
          : 'the daemon does not support daemon-side plumbing; run the matching aws-node',
      );
    }
    if (reply.PodVlanId !== 0) {
      return buildBranchAddResult(ctx.config.cniVersion, ctx.env.netns, ctx.env.ifname, {
        address: ip.IPv4Addr,
        vlanId: reply.PodVlanId,
        subnetGateway: reply.PodENISubnetGW,
        hostVethName: reply.HostVethName,
        hostVethMac: reply.HostVethMac,
        vethPrefix: conf.podSGEnforcingMode === 'strict' ? 'vlan' : conf.vethPrefix,
      });
    }
    return buildAddResult(ctx.config.cniVersion, ctx.env.netns, ctx.env.ifname, {
      address,
      deviceNumber: ip.DeviceNumber,
      routeTableId: ip.RouteTableId,
      hostVethName: reply.HostVethName,
      hostVethMac: reply.HostVethMac,
      vethPrefix: conf.vethPrefix,
    });
  }

  async function del(ctx: CommandContext, conf: AwsCniConf, log: Logger): Promise<void> {
    const prev = readPrevResult(ctx.config.prevResult, ctx.env.ifname);
    let branch: PrevResultBranchPod | undefined;
    try {
      branch = readBranchPrevResult(ctx.config.prevResult, ctx.env.ifname);
    } catch (e) {
      throw new CniError(CniErrorCode.Internal, `del cmd: ${e instanceof Error ? e.message : String(e)}`);
    }
    // A branch pod's network goes with its namespace once the runtime deleted it (the second DEL has none).
    const teardownBranch = async (why: string) => {
      if (branch === undefined || ctx.env.netns === '' || deps.teardownBranchWithoutDaemon === undefined)
        return;
      log.info('tearing a branch-ENI pod down from prevResult', {
        containerID: ctx.env.containerId,
        vlanId: branch.vlanId,
        why,
      });
      await deps.teardownBranchWithoutDaemon(branch);
    };
    try {
      const reply = await deps.daemon(conf.ipamdSocket).delNetwork({
        ...podArgs(ctx),
        K8S_POD_UID: ctx.env.args.podUid ?? '',
        IfName: ctx.env.ifname,
        NetworkName: ctx.config.name || NETWORK_NAME,
        ContainerID: ctx.env.containerId,
        ClientVersion: deps.version,
        Reason: 'PodDeleted',
        PodPlumbing: true,
      });
      if (!reply.Success)
        throw new CniError(CniErrorCode.Internal, 'del cmd: failed to process delete request');
      // The daemon did not know the branch pod (it restarted since the ADD): its prevResult says what to undo.
      if (reply.PodVlanId === 0) await teardownBranch('aws-node does not know the pod');
    } catch (e) {
      if (e instanceof CniError) throw e;
      // The daemon is down or failing: never fail DEL for that. Undo the host side from what ADD recorded;
      // the daemon reclaims the address when it is back (checkpoint restore drops pods without a veth).
      const why = e instanceof Error ? e.message : String(e);
      log.warn('aws-node unavailable; tearing down from prevResult', {
        containerID: ctx.env.containerId,
        error: why,
        prevResult: prev !== undefined,
      });
      ctx.log(`del: aws-node unavailable (${why}); tearing down from prevResult`);
      if (prev !== undefined) await deps.teardownWithoutDaemon(prev);
      await teardownBranch('aws-node unavailable');
    }
  }

  async function check(ctx: CommandContext, conf: AwsCniConf): Promise<void> {
    const prev = readPrevResult(ctx.config.prevResult, ctx.env.ifname);
    let branch: PrevResultBranchPod | undefined;
    try {
      branch = readBranchPrevResult(ctx.config.prevResult, ctx.env.ifname);
    } catch (e) {
      throw new CniError(CniErrorCode.Internal, `check: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (prev === undefined && branch === undefined) {
      throw new CniError(CniErrorCode.Internal, `check: prevResult has no address for ${ctx.env.ifname}`);
    }
    try {
      const status = await deps.daemon(conf.ipamdSocket).health();
      if (status !== ServingStatus.SERVING)
        throw new CniError(CniErrorCode.Internal, 'check: aws-node is not serving');
    } catch (e) {
      throw e instanceof CniError ? e : daemonCallError(e, 'check', conf.ipamdSocket);
    }
    if (branch !== undefined) {
      if (deps.verifyBranch === undefined)
        throw new CniError(CniErrorCode.Internal, 'check: this build cannot verify a branch-ENI pod');
      await deps.verifyBranch(branch, ctx.env.netns, ctx.env.ifname);
    } else {
      await deps.verify(prev!, ctx.env.netns, ctx.env.ifname);
    }
  }
}
