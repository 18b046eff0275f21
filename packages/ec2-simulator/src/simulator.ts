import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AddressAllocation } from './address-pool.js';
import { type Clock, type RandomSource, seededRandom, systemClock } from './clock.js';
import { isEc2SimError, ScenarioError } from './errors.js';
import type { SimEventListener } from './events.js';
import { FaultInjector } from './faults.js';
import { createImdsServer } from './imds.js';
import { instanceTypeTable } from './instance-types.js';
import { parseScenario, type Scenario } from './scenario.js';
import { ADMIN_PREFIX, type CallRecord, createEc2Server } from './server.js';
import { Ec2State, type Timing } from './state.js';
import { AWS_RATE_LIMITS, type RateLimits, TokenBuckets } from './throttle.js';

/** Options of {@link startEc2Simulator}. */
export interface Ec2SimulatorOptions {
  /** The VPCs, subnets, security groups and instances to start with (validated). */
  readonly scenario: Scenario | unknown;
  /** Address to listen on (default `127.0.0.1`). */
  readonly host?: string;
  /** EC2 API port (default: any free port). */
  readonly port?: number;
  /** Time source (default: the wall clock). */
  readonly clock?: Clock;
  /** Random source for ids, MACs, tokens and random address picks (default: seeded with `seed`). */
  readonly random?: RandomSource;
  /** Seed for the default random source (default 1). */
  readonly seed?: number;
  /** Token-bucket limits; `false` disables throttling (default: AWS's published limits). */
  readonly rateLimits?: RateLimits | false;
  /** How free IPv4 addresses are picked (default `sequential`). */
  readonly addressAllocation?: AddressAllocation;
  /** Initial delays (eventual consistency, slow attach/detach, IMDS lag); all 0 by default. */
  readonly timing?: Partial<Timing>;
  /** IAM actions denied from the start, e.g. `['ec2:AttachNetworkInterface']`. */
  readonly iamDeny?: readonly string[];
  /** Called when a state event listener throws (default: ignore). */
  readonly onListenerError?: (error: unknown) => void;
}

/** The endpoints of a running simulator, as the CLI prints them. */
export interface Ec2SimulatorEndpoints {
  /** EC2 Query API endpoint, e.g. `http://127.0.0.1:40123` (use as the SDK's `endpoint`). */
  readonly ec2: string;
  /** Admin API base (`<ec2>/_sim`): `GET /state`, `GET /calls`, `POST /faults`, `DELETE /faults`. */
  readonly admin: string;
  /** Region to configure in the SDK. */
  readonly region: string;
  /** IMDS endpoint per instance id. */
  readonly imds: Readonly<Record<string, string>>;
}

/** A running simulator. */
export interface Ec2Simulator {
  /** EC2 Query API endpoint. */
  readonly endpoint: string;
  /** Admin API base URL. */
  readonly adminEndpoint: string;
  /** Region. */
  readonly region: string;
  /** All endpoints in one object. */
  readonly endpoints: Ec2SimulatorEndpoints;
  /** The account state (read it, subscribe to it, or mutate it directly in tests). */
  readonly state: Ec2State;
  /** Fault injection. */
  readonly faults: FaultInjector;
  /** Every EC2 API call received, oldest first (cleared by `clearCalls`). */
  readonly calls: readonly CallRecord[];
  /** The IMDS endpoint of an instance (throws for an unknown id). */
  imdsEndpoint(instanceId: string): string;
  /** Subscribes to state events; returns an unsubscribe function. */
  subscribe(listener: SimEventListener): () => void;
  /** Forgets recorded calls. */
  clearCalls(): void;
  /** Refills every rate-limit bucket. */
  resetRateLimits(): void;
  /** Stops every listener. */
  close(): Promise<void>;
}

function listen(server: Server, host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const a = server.address() as AddressInfo;
      resolve(`http://${host.includes(':') ? `[${host}]` : host}:${a.port}`);
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Starts the EC2 Query API (with the `/_sim` admin routes) and one IMDSv2 listener per instance, all on
 * loopback by default. Throws a `ScenarioError` for an invalid scenario.
 */
export async function startEc2Simulator(options: Ec2SimulatorOptions): Promise<Ec2Simulator> {
  const scenario = parseScenario(options.scenario);
  const clock = options.clock ?? systemClock;
  const random = options.random ?? seededRandom(options.seed ?? 1);
  const host = options.host ?? '127.0.0.1';
  const instanceTypes = instanceTypeTable(scenario.instanceTypes);
  const state = new Ec2State({
    clock,
    random,
    instanceTypes,
    accountId: scenario.accountId,
    addressAllocation: options.addressAllocation ?? 'sequential',
    ...(options.timing ? { timing: options.timing } : {}),
    ...(options.onListenerError ? { onListenerError: options.onListenerError } : {}),
  });
  for (const v of scenario.vpcs) {
    state.addVpc({ id: v.id, cidrBlocks: v.cidrBlocks, ipv6CidrBlock: v.ipv6CidrBlock });
  }
  for (const g of scenario.securityGroups ?? []) {
    state.addSecurityGroup({
      id: g.id,
      name: g.name,
      description: g.description ?? '',
      vpcId: g.vpcId!,
      tags: new Map(Object.entries(g.tags ?? {})),
    });
  }
  for (const v of scenario.vpcs) {
    if (!state.securityGroups().some((g) => g.vpcId === v.id && g.name === 'default')) {
      state.addSecurityGroup({
        id: state.ids.id('sg'),
        name: 'default',
        description: 'default VPC security group',
        vpcId: v.id,
        tags: new Map(),
      });
    }
  }
  for (const [i, g] of (scenario.securityGroups ?? []).entries()) {
    for (const key of ['ingress', 'egress'] as const) {
      const rules = g[key];
      if (rules === undefined) continue;
      try {
        if (key === 'egress') {
          const defaults = state
            .securityGroup(g.id)!
            .rules.filter((r) => r.isEgress)
            .map((r) => r.id);
          state.revokeSecurityGroupRules(g.id, true, [], defaults);
        }
        if (rules.length > 0) state.authorizeSecurityGroupRules(g.id, key === 'egress', rules);
      } catch (e) {
        if (!isEc2SimError(e)) throw e;
        throw new ScenarioError('SCENARIO_INVALID', `securityGroups[${i}].${key}`, e.message);
      }
    }
  }
  for (const s of scenario.subnets) {
    state.addSubnet({
      id: s.id,
      vpcId: s.vpcId!,
      cidrBlock: s.cidrBlock,
      ipv6CidrBlock: s.ipv6CidrBlock,
      availabilityZone: s.availabilityZone!,
      tags: new Map(Object.entries(s.tags ?? {})),
    });
  }
  // Explicit primary addresses first, so generated ones cannot take them.
  const ordered = [...(scenario.instances ?? [])].sort(
    (a, b) => Number(b.privateIpAddress !== undefined) - Number(a.privateIpAddress !== undefined),
  );
  const launched = new Map<object, string>();
  for (const x of ordered) {
    const inst = state.addInstance({
      id: x.id,
      type: instanceTypes.get(x.instanceType)!,
      subnetId: x.subnetId,
      securityGroupIds: x.securityGroupIds ?? [],
      privateIpAddress: x.privateIpAddress,
      ipv6AddressCount: x.ipv6AddressCount,
      tags: new Map(Object.entries(x.tags ?? {})),
    });
    launched.set(x, inst.id);
  }
  const instanceIds = (scenario.instances ?? []).map((x) => launched.get(x)!);

  const faults = new FaultInjector(state.timing);
  if (options.iamDeny && options.iamDeny.length > 0)
    faults.add({ kind: 'iam-deny', actions: options.iamDeny });
  const limits = options.rateLimits === false ? undefined : (options.rateLimits ?? AWS_RATE_LIMITS);
  const buckets = limits ? new TokenBuckets(limits, clock) : undefined;
  const calls: CallRecord[] = [];
  const imds: Record<string, string> = {};
  const servers: Server[] = [];
  let endpoints: Ec2SimulatorEndpoints | undefined;
  const ec2Server = createEc2Server({
    state,
    faults,
    buckets,
    clock,
    region: scenario.region,
    calls,
    describeEndpoints: () => endpoints,
  });
  try {
    const ec2 = await listen(ec2Server, host, options.port ?? 0);
    servers.push(ec2Server);
    for (const id of instanceIds) {
      const s = createImdsServer({
        state,
        instanceId: id,
        region: scenario.region,
        clock,
        newToken: () => Buffer.from(`${state.ids.requestId()}${state.ids.requestId()}`).toString('base64url'),
      });
      imds[id] = await listen(s, host, 0);
      servers.push(s);
    }
    endpoints = { ec2, admin: `${ec2}${ADMIN_PREFIX}`, region: scenario.region, imds: { ...imds } };
  } catch (e) {
    await Promise.all(servers.map(close));
    throw e;
  }
  const eps = endpoints;
  return {
    endpoint: eps.ec2,
    adminEndpoint: eps.admin,
    region: eps.region,
    endpoints: eps,
    state,
    faults,
    calls,
    imdsEndpoint(instanceId: string): string {
      const e = imds[instanceId];
      if (e === undefined) throw new RangeError(`no IMDS for instance ${instanceId}`);
      return e;
    },
    subscribe: (listener) => state.subscribe(listener),
    clearCalls: () => {
      calls.length = 0;
    },
    resetRateLimits: () => buckets?.reset(),
    close: async () => {
      await Promise.all(servers.map(close));
    },
  };
}
