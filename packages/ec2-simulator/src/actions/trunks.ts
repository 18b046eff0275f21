import { Ec2SimError } from '../errors.js';
import type { TrunkAssociation } from '../model.js';
import type { XmlObject } from '../xml.js';
import { type ActionHandler, applyFilters, dryRun, dryRunSucceeded, paginate, tagSet } from './common.js';

/** Renders an association as EC2's `TrunkInterfaceAssociation`. */
function renderAssociation(a: TrunkAssociation): XmlObject {
  return {
    associationId: a.id,
    branchInterfaceId: a.branchEniId,
    trunkInterfaceId: a.trunkEniId,
    interfaceProtocol: 'VLAN',
    vlanId: a.vlanId,
    tagSet: tagSet(a.tags),
  };
}

/** AssociateTrunkInterface: BranchInterfaceId, TrunkInterfaceId, VlanId (GRE is not simulated), ClientToken. */
export const associateTrunkInterface: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const branchEniId = params.required('BranchInterfaceId');
  const trunkEniId = params.required('TrunkInterfaceId');
  const vlanId = params.int('VlanId', 1, 4094);
  const greKey = params.int('GreKey');
  const clientToken = params.string('ClientToken');
  params.finish();
  if (greKey !== undefined) {
    throw new Ec2SimError('UnsupportedOperation', 'Only the VLAN protocol is supported (GreKey given).');
  }
  if (vlanId === undefined) {
    throw new Ec2SimError('MissingParameter', 'The request must contain the parameter VlanId.');
  }
  if (clientToken !== undefined && clientToken.length > 64) {
    throw new Ec2SimError('InvalidParameterValue', 'ClientToken must be at most 64 characters.');
  }
  if (dry) dryRunSucceeded();
  const a = state.associateTrunkInterface({ branchEniId, trunkEniId, vlanId, clientToken });
  return { interfaceAssociation: renderAssociation(a), clientToken };
};

/** DisassociateTrunkInterface: AssociationId, ClientToken. */
export const disassociateTrunkInterface: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const id = params.required('AssociationId');
  const clientToken = params.string('ClientToken');
  params.finish();
  if (dry) dryRunSucceeded();
  state.disassociateTrunkInterface(id);
  return { return: true, clientToken };
};

const ASSOCIATION_FILTERS = [
  'trunk-interface-association.branch-interface-id',
  'trunk-interface-association.trunk-interface-id',
];

/** DescribeTrunkInterfaceAssociations: `AssociationId.N`, filters by branch or trunk, MaxResults 5–255. */
export const describeTrunkInterfaceAssociations: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const ids = params.list('AssociationId');
  const filters = params.filters();
  let list = state.trunkAssociations();
  for (const id of ids) {
    if (!list.some((a) => a.id === id)) {
      throw new Ec2SimError('InvalidAssociationID.NotFound', `The association ID '${id}' does not exist`);
    }
  }
  if (ids.length > 0) list = list.filter((a) => ids.includes(a.id));
  const matched = applyFilters(
    list,
    filters,
    ASSOCIATION_FILTERS,
    (a, name) => (name.endsWith('branch-interface-id') ? [a.branchEniId] : [a.trunkEniId]),
    (a) => a.tags,
  );
  const { page, nextToken } = paginate(matched, params, {
    min: 5,
    max: 255,
    action: 'DescribeTrunkInterfaceAssociations',
  });
  params.finish();
  if (dry) dryRunSucceeded();
  return { interfaceAssociationSet: page.map(renderAssociation), nextToken };
};
