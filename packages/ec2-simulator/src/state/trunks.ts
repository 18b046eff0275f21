import { Ec2SimError } from '../errors.js';
import type { Eni, Instance, TrunkAssociation } from '../model.js';
import type { StateStore } from './store.js';

/** Parameters of AssociateTrunkInterface, already checked for shape by the action parser. */
export interface AssociateTrunkRequest {
  /** The branch ENI (an `available` interface). */
  readonly branchEniId: string;
  /** The trunk ENI (attached to a trunking-compatible instance). */
  readonly trunkEniId: string;
  /** VLAN id, 1–4094. */
  readonly vlanId: number;
  /** Idempotency token. */
  readonly clientToken?: string | undefined;
}

/** The associations of one trunk, by VLAN id. */
export function associationsOf(store: StateStore, trunkEniId: string): TrunkAssociation[] {
  return [...store.associations.values()]
    .filter((a) => a.trunkEniId === trunkEniId)
    .sort((a, b) => a.vlanId - b.vlanId);
}

/** The association of a branch ENI, if any. */
export function associationOfBranch(store: StateStore, branchEniId: string): TrunkAssociation | undefined {
  return [...store.associations.values()].find((a) => a.branchEniId === branchEniId);
}

/**
 * The checks AttachNetworkInterface adds for trunks: only on a trunking-compatible type
 * (`UnsupportedOperation`), one trunk per instance; a branch cannot be attached.
 */
export function checkTrunkAttach(store: StateStore, eni: Eni, instance: Instance): void {
  if (eni.interfaceType === 'branch') {
    throw new Ec2SimError(
      'InvalidNetworkInterface.InUse',
      `Interface ${eni.id} is a branch of a trunk interface and cannot be attached.`,
    );
  }
  if (eni.interfaceType !== 'trunk') return;
  if (!instance.type.isTrunkingCompatible) {
    throw new Ec2SimError(
      'UnsupportedOperation',
      `Instance type ${instance.type.name} does not support trunk network interfaces.`,
    );
  }
  const other = [...store.enis.values()].find(
    (e) => e.interfaceType === 'trunk' && e.attachment?.instanceId === instance.id,
  );
  if (other) {
    throw new Ec2SimError(
      'InvalidParameterValue',
      `Instance ${instance.id} already has trunk interface ${other.id} attached.`,
    );
  }
}

/**
 * AssociateTrunkInterface: `branchEniId` joins the trunk under `vlanId`, within the instance type's branch
 * limit. With a `clientToken` seen before, the same request returns the same association.
 */
export function associateTrunk(store: StateStore, req: AssociateTrunkRequest): TrunkAssociation {
  const seen = store.associationTokens.replay(req.clientToken, req);
  const existing = seen.id === undefined ? undefined : store.associations.get(seen.id);
  if (existing) return existing;
  const trunk = store.requireEni(req.trunkEniId);
  const branch = store.requireEni(req.branchEniId);
  if (trunk.interfaceType !== 'trunk') {
    throw new Ec2SimError('InvalidParameterValue', `Interface ${trunk.id} is not a trunk interface.`);
  }
  if (branch.interfaceType === 'trunk') {
    throw new Ec2SimError('InvalidParameterValue', `Interface ${branch.id} is a trunk interface.`);
  }
  if (!Number.isInteger(req.vlanId) || req.vlanId < 1 || req.vlanId > 4094) {
    throw new Ec2SimError('InvalidParameterValue', `VLAN id ${req.vlanId} is not within 1-4094.`);
  }
  if (branch.attachment || associationOfBranch(store, branch.id)) {
    throw new Ec2SimError('InvalidNetworkInterface.InUse', `Interface: [${branch.id}] in use.`);
  }
  const instance = store.instanceOf(trunk);
  if (!instance || trunk.attachment?.detachingUntil !== undefined) {
    throw new Ec2SimError(
      'IncorrectState',
      `Trunk interface ${trunk.id} must be attached to an instance to carry branches.`,
    );
  }
  if (branch.vpcId !== trunk.vpcId || branch.availabilityZone !== trunk.availabilityZone) {
    throw new Ec2SimError(
      'InvalidParameterValue',
      `The branch interface ${branch.id} and trunk interface ${trunk.id} are in different ${branch.vpcId !== trunk.vpcId ? 'VPCs' : 'availability zones'}.`,
    );
  }
  const onTrunk = associationsOf(store, trunk.id);
  if (onTrunk.some((a) => a.vlanId === req.vlanId)) {
    throw new Ec2SimError(
      'InvalidParameterValue',
      `VLAN id ${req.vlanId} is already in use on trunk interface ${trunk.id}.`,
    );
  }
  if (onTrunk.length >= instance.type.branchInterfaces) {
    throw new Ec2SimError(
      'AttachmentLimitExceeded',
      `Branch interface count ${onTrunk.length + 1} exceeds the limit of ${instance.type.branchInterfaces} for ${instance.type.name}.`,
    );
  }
  const now = store.now();
  const delay = store.timing.associateDelayMs ?? 0;
  const association: TrunkAssociation = {
    id: store.ids.id('trunk-assoc'),
    branchEniId: branch.id,
    trunkEniId: trunk.id,
    vlanId: req.vlanId,
    createdAt: now,
    readyAt: now + delay,
    tags: new Map(),
  };
  store.associations.set(association.id, association);
  store.associationTokens.remember(req.clientToken, seen.fingerprint, association.id);
  branch.interfaceType = 'branch';
  const announce = () => {
    if (store.associations.get(association.id) !== association) return;
    store.emit({
      type: 'trunk-associated',
      associationId: association.id,
      branchEniId: branch.id,
      trunkEniId: trunk.id,
      vlanId: association.vlanId,
    });
  };
  if (delay > 0) void store.clock.sleep(delay).then(announce);
  else announce();
  return association;
}

/** Removes an association (DisassociateTrunkInterface, or deleting its branch); the branch is unreachable at once. */
export function dropAssociation(store: StateStore, association: TrunkAssociation): void {
  store.associations.delete(association.id);
  const branch = store.enis.get(association.branchEniId);
  if (branch?.interfaceType === 'branch') branch.interfaceType = 'interface';
  store.emit({
    type: 'trunk-disassociated',
    associationId: association.id,
    branchEniId: association.branchEniId,
    trunkEniId: association.trunkEniId,
  });
}

/** DisassociateTrunkInterface. */
export function disassociateTrunk(store: StateStore, associationId: string): void {
  const a = store.associations.get(associationId);
  if (!a) {
    throw new Ec2SimError(
      'InvalidAssociationID.NotFound',
      `The association ID '${associationId}' does not exist`,
    );
  }
  dropAssociation(store, a);
}
