export { type BackendInfo, detectBackend, interpretIptablesVersion } from './detect.js';
export {
  diffSnat,
  isOwnedBuiltinRule,
  type SnatChainChange,
  type SnatChange,
  type SnatChangeSet,
  type SnatNftChange,
  type SnatRuleChange,
  type SnatState,
} from './diff.js';
export {
  addEgressSnat,
  deleteEgressSnat,
  diffEgressSnat,
  type EgressFamily,
  type EgressNatRead,
  type EgressSnatApplied,
  type EgressSnatOptions,
  type EgressSnatPlan,
  egressChainName,
  egressComment,
  egressSnatInPlace,
  egressTeardownScript,
  planEgressSnat,
  readEgressNat,
} from './egress.js';
export {
  EGRESS_RANGES,
  type EgressRangeBlock,
  egressRangeBlock,
  ensureEgressRangeBlock,
} from './egress-block.js';
export { isSnatError, SnatError, type SnatErrorCode, type SnatErrorInit } from './errors.js';
export {
  COMMENTS,
  CONNMARK_CHAIN,
  isOwnedChain,
  NFT_TABLE,
  OWNED_CHAIN_PREFIXES,
  OWNED_COMMENTS,
  SNAT_CHAIN,
} from './names.js';
export {
  type ConnmarkBackend,
  type RandomizeSnat,
  type ResolvedSnatOptions,
  resolveSnatOptions,
  type SnatOptions,
} from './options.js';
export {
  parseIptablesSave,
  parseNftTable,
  type SavedChain,
  type SavedRule,
  type SavedTable,
} from './parse.js';
export {
  type ChainRules,
  emptySnatPlan,
  type NftChainPlan,
  type NftTablePlan,
  planNftConnmark,
  planSnat,
  type SnatPlan,
  type SnatTable,
} from './plan.js';
export {
  applySnatChanges,
  readSnatState,
  reconcileSnat,
  type SnatCommands,
  type SnatRead,
  type SnatReconcileResult,
  type SnatTools,
  teardownSnat,
} from './reconcile.js';
export { renderIptables, renderNftTable } from './render.js';
export {
  type Command,
  type CommandResult,
  type CommandRunner,
  type ProcessRunnerOptions,
  processRunner,
} from './runner.js';
export {
  type Ipv4Cidr,
  normalizeIpv4Cidr,
  parseIpv4,
  validateInterfaceName,
  validateVethPrefix,
} from './validate.js';
