import type { SimEvent } from '../events.js';
import type { Eni } from '../model.js';
import type { Ec2State } from '../state.js';
import { isVpcError, VpcError } from './errors.js';
import { configurePrimaryInterface, nextInstanceIfname } from './instance.js';
import type { EniIpv6 } from './ipv6-plan.js';
import { type EniIpv4, subnetAddressing } from './plan.js';
import type { VpcRouter } from './router.js';

/** What {@link followEc2State} needs. */
export interface FollowerDeps {
  /** The control plane's state. */
  readonly state: Ec2State;
  /** The router to keep in step. */
  readonly router: VpcRouter;
  /** The namespace file of an instance, once created. */
  readonly instanceNetns: (instanceId: string) => string | undefined;
  /** Receives data-plane failures (the EC2 call that caused them has already succeeded). */
  readonly onError: (error: VpcError) => void;
  /** How often to look for SourceDestCheck changes (no event exists for them), in ms. */
  readonly pollMs: number;
}

/** A running follower. */
export interface Follower {
  /** Plugs every ENI attached to an instance (used at launch, after its namespace exists). */
  plugAttached(instanceId: string): void;
  /** Stops following. */
  stop(): void;
}

/** The IPv4 addresses of an ENI as the router needs them. */
export function eniIpv4(eni: Eni): EniIpv4 {
  return {
    primary: eni.privateIps[0]!.value,
    secondaries: eni.privateIps.slice(1).map((a) => a.value),
    prefixes: eni.ipv4Prefixes.map((p) => p.value),
  };
}

/** The IPv6 addresses and prefixes of an ENI as the router needs them. */
export function eniIpv6(eni: Eni): EniIpv6 {
  return {
    addresses: eni.ipv6Addresses.map((a) => a.value),
    prefixes: eni.ipv6Prefixes.map((p) => p.value),
  };
}

const asVpcError = (op: string, e: unknown): VpcError =>
  isVpcError(e) ? e : new VpcError('VPC_DATAPLANE', op, String((e as Error)?.message ?? e), { cause: e });

/**
 * Keeps the data plane in step with EC2 state: state events (delivered synchronously inside the EC2 call)
 * plug, update or unplug ENIs, so the change is in the kernel before the call returns. Events that arrive
 * while one is handled (reading state can complete a pending detach) are queued and handled in order.
 */
export function followEc2State(deps: FollowerDeps): Follower {
  const { state, router } = deps;

  const plug = (eni: Eni): void => {
    const instanceId = eni.attachment!.instanceId;
    const nsPath = deps.instanceNetns(instanceId);
    if (!nsPath || router.eni(eni.id)) return;
    const isPrimary = state.instance(instanceId)?.primaryEniId === eni.id;
    const ifname = isPrimary ? 'eth0' : nextInstanceIfname(nsPath);
    const ipv4 = eniIpv4(eni);
    router.plug({
      eniId: eni.id,
      instanceId,
      mac: eni.mac,
      ipv4,
      ipv6: eniIpv6(eni),
      sourceDestCheck: eni.sourceDestCheck,
      isPublic: isPrimary,
      groups: eni.groups,
      instanceNetns: nsPath,
      ifname,
    });
    if (isPrimary) {
      const sub = subnetAddressing(state.subnet(eni.subnetId)!.cidrBlock);
      const v6 = router.vpcIpv6Cidrs().length > 0 ? eni.ipv6Addresses[0]?.value : undefined;
      configurePrimaryInterface(nsPath, ifname, ipv4.primary, sub.prefixLength, sub.gateway, v6);
    }
    if (eni.interfaceType === 'trunk') {
      const now = state.now();
      for (const a of state.trunkAssociations(eni.id)) if (a.readyAt <= now) plugBranch(a.branchEniId);
    }
  };

  /** Plugs a branch onto its trunk when both exist and the association is ready. */
  const plugBranch = (branchEniId: string): void => {
    const branch = state.eni(branchEniId);
    const a = state.trunkAssociations().find((x) => x.branchEniId === branchEniId);
    if (!branch || !a || a.readyAt > state.now()) return;
    router.plugBranch({
      eniId: branch.id,
      trunkEniId: a.trunkEniId,
      mac: branch.mac,
      ipv4: eniIpv4(branch),
      sourceDestCheck: branch.sourceDestCheck,
      groups: branch.groups,
    });
  };

  const refreshSecurity = (): void => {
    router.setSecurity(
      new Map(state.securityGroups().map((g) => [g.id, g.rules])),
      (id) => state.eni(id)?.groups,
    );
  };

  const sync = (eniId: string): void => {
    const eni = state.eni(eniId);
    const plugged = router.eni(eniId);
    if (plugged?.trunkEniId !== undefined) {
      const still = eni && state.trunkAssociations().some((a) => a.branchEniId === eniId);
      if (still) router.update(eniId, eniIpv4(eni), eni.sourceDestCheck);
      else router.unplug(eniId);
    } else if (!eni?.attachment) router.unplug(eniId);
    else if (!plugged) plug(eni);
    else router.update(eniId, eniIpv4(eni), eni.sourceDestCheck, eniIpv6(eni));
  };

  const handle = (ev: SimEvent): void => {
    switch (ev.type) {
      case 'eni-attached':
      case 'eni-detached':
      case 'eni-deleted':
      case 'addresses-assigned':
      case 'addresses-unassigned':
        sync(ev.eniId);
        break;
      case 'security-groups-changed':
      case 'security-group-rules-changed':
        refreshSecurity();
        break;
      case 'trunk-associated':
        plugBranch(ev.branchEniId);
        break;
      case 'trunk-disassociated':
        router.unplug(ev.branchEniId);
        break;
      case 'vpc-cidr-associated':
        router.addVpcCidr(ev.cidrBlock);
        break;
      case 'vpc-cidr-disassociated':
        router.removeVpcCidr(ev.cidrBlock);
        break;
      default:
        break;
    }
  };

  refreshSecurity();
  const queue: SimEvent[] = [];
  let busy = false;
  const unsubscribe = state.subscribe((event) => {
    queue.push(event);
    if (busy) return;
    busy = true;
    try {
      for (let ev = queue.shift(); ev !== undefined; ev = queue.shift()) {
        try {
          handle(ev);
        } catch (e) {
          deps.onError(asVpcError(`event.${ev.type}`, e));
        }
      }
    } finally {
      busy = false;
    }
  });

  // Reading an ENI also completes detaches whose delay has passed (their events then arrive above).
  const timer = setInterval(() => {
    for (const e of router.enis()) {
      try {
        const now = state.eni(e.eniId);
        if (now?.attachment && now.sourceDestCheck !== e.sourceDestCheck) sync(e.eniId);
      } catch (err) {
        deps.onError(asVpcError('poll', err));
      }
    }
  }, deps.pollMs);
  timer.unref();

  return {
    plugAttached(instanceId) {
      for (const eni of state.attachedEnis(instanceId)) plug(eni);
    },
    stop() {
      clearInterval(timer);
      unsubscribe();
    },
  };
}
