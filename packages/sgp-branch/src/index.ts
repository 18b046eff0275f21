export {
  BRANCH_ENI_DESCRIPTION,
  BRANCH_POD_TAG,
  type BranchEni,
  formatPodEniAnnotation,
  MAX_VLAN_ID,
  type ParsePodEniOptions,
  POD_ENI_ANNOTATION,
  POD_ENI_RESOURCE,
  parsePodEniAnnotation,
  vlanIdOf,
} from './annotation.js';
export { applyBranchNetwork, applyBranchNode, setupBranchPod, teardownBranchNetwork } from './apply.js';
export {
  type BranchAction,
  type BranchClusterView,
  BranchController,
  type BranchControllerOptions,
  type BranchGroupSource,
  type BranchLedger,
  type BranchNodeView,
  type BranchPodOutcome,
  type BranchPodView,
  type CoolingBranch,
  decideBranchActions,
  type OwnedBranch,
  usedVlans,
} from './controller.js';
export { isSgpError, SGP_ERROR_HINTS, SgpError, type SgpErrorCode, type SgpErrorInit } from './errors.js';
export { jsonPointerToken } from './json-pointer.js';
export { type BranchLinkPort, netlinkBranchLinkPort } from './link-port.js';
export { type HostLink, podRequestsBranch, type ResourceLimits, trunkLinkOf } from './node.js';
export {
  BRANCH_LINK_PATTERN,
  type BranchLinkKind,
  type BranchLinkSpec,
  type BranchNetworkInput,
  type BranchNetworkPlan,
  type BranchNodeOptions,
  type BranchNodePlan,
  type BranchTeardownInput,
  type BranchTeardownPlan,
  type EnforcingMode,
  planBranchNetwork,
  planBranchNode,
  planBranchTeardown,
} from './plan.js';
export type { BranchControllerPort, BranchEniRecord, CreatedBranchEni, PodRef } from './port.js';
export {
  type LabelSelector,
  type LabelSelectorRequirement,
  matchesLabelSelector,
  type PodIdentity,
  podSecurityGroups,
  type SecurityGroupPolicy,
  validateLabelSelector,
  validateSecurityGroupPolicy,
} from './selector.js';
export { lowestFreeVlan } from './vlan.js';
