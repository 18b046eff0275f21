export { type BranchPodInput, type BranchPodPlan, planBranchPod, type VlanLinkPlan } from './branch.js';
export {
  diffRouting,
  diffSize,
  type RoutingDiff,
  type RoutingDrift,
  type RoutingState,
  routingDrift,
} from './diff.js';
export { isRoutingError, RoutingError, type RoutingErrorCode, type RoutingErrorInit } from './errors.js';
export type { Family } from './ip.js';
export {
  branchHostVethName,
  generateHostMac,
  hostVethName,
  type RandomBytes,
  routeTableId,
  validateIfName,
  validateVethPrefix,
} from './naming.js';
export { type NetlinkPortFactoryOptions, netlinkPortFactory, netlinkRoutingPort } from './netlink-port.js';
export {
  type AddressSpec,
  describe,
  LOCAL_TABLE,
  MAIN_TABLE,
  type NeighbourSpec,
  type NetObject,
  type NetObjectKind,
  onLinkScope,
  type RouteSpec,
  type RuleSpec,
  slotOf,
} from './objects.js';
export {
  type EniInput,
  emptyPlan,
  type LinkPlan,
  mergePlans,
  type NodeRoutingInput,
  nodeFwmark,
  type PodRouteInput,
  PRIORITY,
  planEni,
  planNodeRouting,
  planPodHost,
  type RoutingPlan,
  type RoutingScope,
} from './plan.js';
export {
  type PodNetworkDeps,
  type PodNetworkInput,
  type PodNetworkPlan,
  type PodVethPlan,
  planPodNetwork,
  setupPodNetwork,
  teardownPodNetwork,
} from './pod.js';
export type {
  ClosableRoutingPort,
  LinkInfo,
  ListOf,
  RoutingPort,
  RoutingPortFactory,
  VethSpec,
} from './port.js';
export {
  applyRoutingDiff,
  type RoutingReconcileResult,
  readRoutingState,
  reconcileRouting,
  teardownRouting,
  verifyRouting,
} from './reconcile.js';
