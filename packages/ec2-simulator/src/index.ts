export type { ActionFamily } from './actions/index.js';
export type { AddressAllocation, Ipv4Pool, Ipv6Pool } from './address-pool.js';
export type { CliErrorCode, CliIo, ServeArgs } from './cli-main.js';
export { CliError, parseServeArgs, runCli, USAGE } from './cli-main.js';
export type { Clock, RandomSource } from './clock.js';
export { ManualClock, seededRandom, systemClock } from './clock.js';
export type { Ec2ErrorCode, ScenarioErrorCode } from './errors.js';
export {
  EC2_ERROR_CODES,
  Ec2SimError,
  httpStatusFor,
  isEc2SimError,
  isScenarioError,
  ScenarioError,
} from './errors.js';
export type {
  AddressChange,
  AddressesAssignedEvent,
  AddressesUnassignedEvent,
  EniAttachedEvent,
  EniCreatedEvent,
  EniDeletedEvent,
  EniDetachedEvent,
  SecurityGroupRulesChangedEvent,
  SecurityGroupsChangedEvent,
  SimEvent,
  SimEventListener,
  SimEventType,
  TagsChangedEvent,
  TrunkAssociatedEvent,
  TrunkDisassociatedEvent,
  VpcCidrAssociatedEvent,
  VpcCidrDisassociatedEvent,
} from './events.js';
export type {
  DelayFault,
  EventualConsistencyFault,
  FailFault,
  FaultSpec,
  FaultSpecErrorCode,
  IamDenyFault,
  LatencyFault,
  ThrottleFault,
} from './faults.js';
export { FaultInjector, FaultSpecError, isFaultSpecError, parseFaultSpec } from './faults.js';
export { IdGenerator } from './ids.js';
export type { InstanceTypeInfo, InstanceTypeSpec, NetworkCardInfo } from './instance-types.js';
export { INSTANCE_TYPES, instanceType, instanceTypeTable } from './instance-types.js';
export type { Ipv4Cidr, Ipv6Cidr } from './ip.js';
export type {
  AssignedAddress,
  Attachment,
  Eni,
  Instance,
  InterfaceType,
  SecurityGroup,
  SecurityGroupRule,
  Subnet,
  TrunkAssociation,
  Vpc,
} from './model.js';
export type {
  ResolvedScenario,
  Scenario,
  ScenarioInstance,
  ScenarioRule,
  ScenarioSecurityGroup,
  ScenarioSubnet,
  ScenarioVpc,
} from './scenario.js';
export { loadScenarioFile, parseScenario } from './scenario.js';
export type { CallRecord } from './server.js';
export type { Ec2Simulator, Ec2SimulatorEndpoints, Ec2SimulatorOptions } from './simulator.js';
export { startEc2Simulator } from './simulator.js';
export type { AssociateTrunkRequest } from './state/trunks.js';
export type { VpcCidrAssociation } from './state/vpc-cidrs.js';
export { Ec2State } from './state.js';
export type {
  AssignIpv4Request,
  AssignIpv6Request,
  AssignResult,
  CreateEniRequest,
  CreateSecurityGroupRequest,
  Ec2StateOptions,
  ExplicitAddress,
  RuleRequest,
  Timing,
} from './state-types.js';
export type { BucketLimit, RateLimits } from './throttle.js';
export { AWS_RATE_LIMITS, TokenBuckets } from './throttle.js';
export * from './vpc/index.js';
