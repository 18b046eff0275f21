export type { AdminServer } from './admin.js';
export {
  flagsScenario,
  parseVpcCliArgs,
  runVpcCli,
  VPC_USAGE,
  type VpcCliArgs,
  type VpcCliIo,
} from './cli-main.js';
export type {
  DescribedEni,
  DescribedInstance,
  DescribedInternet,
  DescribedNetns,
  DescribedSubnet,
  DescribedVpc,
  VirtualVpcDescription,
} from './describe.js';
export { isVpcError, VPC_ERROR_CODES, VpcError, type VpcErrorCode } from './errors.js';
export { type EniIpv6, eui64LinkLocal, VPC_IPV6_ADDRESSES } from './ipv6-plan.js';
export { isRunId, type RunNames, runIdOfNetns, runNames, VPC_NETNS_PREFIX, VPC_STATE_DIR } from './names.js';
export { DROP_REASONS, type DropReason, ENI_MTU, type EniIpv4, VPC_ADDRESSES } from './plan.js';
export type { AddressOwner, RouterEni, RouterView } from './router.js';
export { downAllStale, downRun, listRuns, type RunRecord, type RunStatus } from './run-state.js';
export { startVirtualVpc, type VirtualVpc, type VirtualVpcOptions } from './virtual-vpc.js';
