import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { isNetlinkError, netnsAdd, netnsDel, netnsPath } from '@vpc-cni-kit/netlink';
import { type Clock, type RandomSource, systemClock } from '../clock.js';
import { parseIpv4Cidr, parseIpv6Cidr } from '../ip.js';
import { parseScenario } from '../scenario.js';
import { type Ec2Simulator, type Ec2SimulatorOptions, startEc2Simulator } from '../simulator.js';
import { type AdminServer, startAdminServer } from './admin.js';
import type { VirtualVpcDescription } from './describe.js';
import { describeRun } from './describe.js';
import { isVpcError, VpcError } from './errors.js';
import { type Follower, followEc2State } from './follower.js';
import { createInstanceNetns } from './instance.js';
import { VPC_IPV6_ADDRESSES } from './ipv6-plan.js';
import { checkRunId, newRunId, type RunNames, runNames, VPC_STATE_DIR } from './names.js';
import { subnetAddressing, VPC_ADDRESSES } from './plan.js';
import { type RouterView, VpcRouter } from './router.js';
import { processStart, removeRunResources, writeRunRecord } from './run-state.js';
import { type NamespaceService, startEc2Service, startImdsService } from './services.js';

/** Options of {@link startVirtualVpc}. */
export interface VirtualVpcOptions {
  /** The VPCs, subnets and instances (validated as the simulator validates them). */
  readonly scenario: unknown;
  /** Run id (8 hex digits); default: drawn from `random`. */
  readonly runId?: string;
  /** Randomness for the run id (default: crypto). */
  readonly random?: RandomSource;
  /** Time source for the simulator and IMDS (default: the wall clock). */
  readonly clock?: Clock;
  /** Further simulator options (seed, rate limits, timing, address allocation, IAM denies). */
  readonly simulator?: Omit<Ec2SimulatorOptions, 'scenario' | 'clock' | 'host' | 'onListenerError'>;
  /** Where run records live (default `/run/vck-vpc`). */
  readonly stateDir?: string;
  /** Called when keeping the data plane in step with an EC2 change fails (the EC2 call itself succeeded). */
  readonly onError?: (error: VpcError) => void;
  /** This process stops the run on SIGTERM, so `vpc-sim down --run` may signal it (default false). */
  readonly stopsOnSigterm?: boolean;
  /** How often to look for source/destination-check changes, in ms (default 1000). */
  readonly pollMs?: number;
}

/** A running virtual VPC. */
export interface VirtualVpc {
  /** Run id (in every namespace name). */
  readonly runId: string;
  /** The control plane (EC2 API on loopback, state, faults, events). */
  readonly simulator: Ec2Simulator;
  /** Namespace names of this run. */
  readonly names: RunNames;
  /** Everything `vpc-sim up` prints (stable shape; see {@link VirtualVpcDescription}). */
  describe(): VirtualVpcDescription;
  /** The router's address map and drop counters, read now. */
  routerView(): RouterView;
  /** Data-plane errors seen while following EC2 changes (newest last, at most 100). */
  readonly errors: readonly VpcError[];
  /** Removes every namespace, listener and record of the run. Idempotent. */
  close(): Promise<void>;
}

const RESERVED = ['169.254.0.0/16', '198.51.100.0/24', '203.0.113.0/24'];

function overlaps(a: string, b: string): boolean {
  const x = parseIpv4Cidr(a)!;
  const y = parseIpv4Cidr(b)!;
  const end = (c: { base: number; length: number }) => c.base + 2 ** (32 - c.length);
  return x.base < end(y) && y.base < end(x);
}

/**
 * Starts the EC2 simulator and builds its data plane: one network namespace per instance (primary ENI as
 * `eth0`, configured as EC2's DHCP would), a VPC router namespace, an internet namespace, IMDS at
 * 169.254.169.254 and the EC2 endpoint at 203.0.113.10 reachable from every instance. Later EC2 calls
 * (attach, detach, assign, unassign) change the data plane before they return. Needs Linux and root.
 * Throws `ScenarioError` for a bad scenario and `VpcError` otherwise; on failure everything created is
 * removed again.
 */
export async function startVirtualVpc(options: VirtualVpcOptions): Promise<VirtualVpc> {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) {
    throw new VpcError('VPC_UNSUPPORTED', 'start', 'a virtual VPC needs Linux and root (network namespaces)');
  }
  const scenario = parseScenario(options.scenario);
  if (scenario.vpcs.length !== 1) {
    throw new VpcError(
      'VPC_INVALID_OPTIONS',
      'start',
      `a virtual VPC run holds exactly one VPC (got ${scenario.vpcs.length}); start one run per VPC`,
    );
  }
  for (const v of scenario.vpcs) {
    for (const c of v.cidrBlocks) {
      const clash = RESERVED.find((r) => overlaps(c, r));
      if (clash)
        throw new VpcError(
          'VPC_INVALID_OPTIONS',
          'start',
          `VPC CIDR ${c} overlaps ${clash}, used by the virtual VPC`,
        );
    }
  }
  for (const v of scenario.vpcs) {
    const c = v.ipv6CidrBlock === undefined ? undefined : parseIpv6Cidr(v.ipv6CidrBlock);
    const r = parseIpv6Cidr(VPC_IPV6_ADDRESSES.reserved)!;
    const end = (x: { base: bigint; length: number }) => x.base + (1n << BigInt(128 - x.length));
    if (c !== undefined && c.base < end(r) && r.base < end(c))
      throw new VpcError(
        'VPC_INVALID_OPTIONS',
        'start',
        `VPC IPv6 block ${v.ipv6CidrBlock} overlaps ${VPC_IPV6_ADDRESSES.reserved}, used by the virtual VPC`,
      );
  }
  const random: RandomSource = options.random ?? (() => randomBytes(4).readUInt32BE() / 2 ** 32);
  const runId = options.runId === undefined ? newRunId(random) : checkRunId('start', options.runId);
  const stateDir = options.stateDir ?? VPC_STATE_DIR;
  const clock = options.clock ?? systemClock;
  const names = runNames(runId);
  const created: string[] = [];
  const pidStart = processStart(process.pid) ?? '';
  const record = (description?: unknown) =>
    writeRunRecord(stateDir, {
      version: 1,
      runId,
      pid: process.pid,
      pidStart,
      stopsOnSigterm: options.stopsOnSigterm === true,
      namespaces: [...created],
      ...(description === undefined ? {} : { description }),
    });
  const errors: VpcError[] = [];
  const onError = (e: VpcError) => {
    errors.push(e);
    if (errors.length > 100) errors.shift();
    options.onError?.(e);
  };
  const addNetns = (name: string, make: (n: string) => string = netnsAdd): string => {
    created.push(name);
    record();
    try {
      return make(name);
    } catch (e) {
      created.pop();
      throw new VpcError('VPC_DATAPLANE', 'netns.add', `cannot create namespace ${name}`, { cause: e });
    }
  };

  let sim: Ec2Simulator | undefined;
  let router: VpcRouter | undefined;
  const services: NamespaceService[] = [];
  let admin: AdminServer | undefined;
  let follower: Follower | undefined;
  const instanceNs = new Map<string, string>();

  const teardown = async () => {
    follower?.stop();
    await Promise.all(services.map((s) => s.close()));
    await admin?.close();
    router?.close();
    for (const n of created) {
      try {
        netnsDel(n);
      } catch (e) {
        if (!(isNetlinkError(e) && e.code === 'ENOENT')) throw e;
      }
    }
    await sim?.close();
    removeRunResources(runId, stateDir);
  };

  try {
    record();
    sim = await startEc2Simulator({
      ...options.simulator,
      scenario,
      clock,
      host: '127.0.0.1',
      onListenerError: (e) =>
        onError(isVpcError(e) ? e : new VpcError('VPC_DATAPLANE', 'event', String(e), { cause: e })),
    });
    const s = sim;
    const routerPath = addNetns(names.router);
    const internetPath = addNetns(names.internet);
    const subnets = s.state.subnets().map((sub) => subnetAddressing(sub.cidrBlock));
    router = VpcRouter.create({
      routerNetns: routerPath,
      internetNetns: internetPath,
      vpcCidrs: s.state.vpcs().flatMap((v) => v.cidrBlocks),
      vpcIpv6Cidrs: s.state.vpcs().flatMap((v) => (v.ipv6CidrBlock ? [v.ipv6CidrBlock] : [])),
      subnets,
    });
    const r = router;

    follower = followEc2State({
      state: s.state,
      router: r,
      instanceNetns: (id) => instanceNs.get(id),
      onError,
      pollMs: options.pollMs ?? 1000,
    });
    for (const inst of s.state.instances()) {
      instanceNs.set(inst.id, addNetns(names.instance(inst.id), createInstanceNetns));
      follower.plugAttached(inst.id);
    }

    services.push(
      await startImdsService(routerPath, {
        state: s.state,
        region: s.region,
        clock,
        ownerOf: (a) => r.ownerOf(a),
        address: VPC_ADDRESSES.imds,
      }),
    );
    const ec2 = new URL(s.endpoint);
    services.push(await startEc2Service(internetPath, { host: ec2.hostname, port: Number(ec2.port) }));

    let closed = false;
    let closing: Promise<void> | undefined;
    const describe = (): VirtualVpcDescription =>
      describeRun({
        runId,
        sim: s,
        names,
        netnsPath: (n) => netnsPath(n),
        router: r,
        stateFile: `${stateDir}/${runId}/state.json`,
        adminEndpoint: admin ? `http://127.0.0.1:${(admin.server.address() as AddressInfo).port}` : '',
      });
    admin = await startAdminServer({
      describe,
      routerView: () => r.view(),
      errors: () => errors.map((e) => ({ code: e.code, op: e.op, message: e.message })),
    });
    const description = describe();
    record(description);
    return {
      runId,
      simulator: s,
      names,
      errors,
      describe: () => {
        if (closed) throw new VpcError('VPC_CLOSED', 'describe', 'the virtual VPC is closed');
        return describe();
      },
      routerView: () => r.view(),
      close: () => {
        closed = true;
        closing ??= teardown();
        return closing;
      },
    };
  } catch (e) {
    await teardown().catch(() => {});
    throw e;
  }
}
