export { type BranchPortMethod, FakeBranchCloud, type FakeTrunk, type FaultPlan } from './fake-cloud.js';
