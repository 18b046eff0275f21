import type { RandomSource } from '../clock.js';
import { VpcError } from './errors.js';

/** Every namespace a virtual VPC creates starts with this. */
export const VPC_NETNS_PREFIX = 'vckvpc-';

/** Where runs record what they created (`<dir>/<runId>/state.json`). */
export const VPC_STATE_DIR = '/run/vck-vpc';

const RUN_ID = /^[0-9a-f]{8}$/;

/** True for a well-formed run id (8 lower-case hex digits). */
export function isRunId(s: unknown): s is string {
  return typeof s === 'string' && RUN_ID.test(s);
}

/** A fresh run id from a random source. */
export function newRunId(random: RandomSource): string {
  let id = '';
  for (let i = 0; i < 8; i++) id += Math.floor(random() * 16).toString(16);
  return id;
}

/** Checks a run id given from outside; throws `VPC_INVALID_OPTIONS`. */
export function checkRunId(op: string, s: unknown): string {
  if (!isRunId(s)) throw new VpcError('VPC_INVALID_OPTIONS', op, `bad run id ${JSON.stringify(s)}`);
  return s;
}

/** The namespace names of one run. */
export interface RunNames {
  /** The run id. */
  readonly runId: string;
  /** The VPC router namespace. */
  readonly router: string;
  /** The internet namespace. */
  readonly internet: string;
  /** The namespace of one instance. */
  instance(instanceId: string): string;
}

/** Names for a run: `vckvpc-<run>-rtr`, `vckvpc-<run>-inet`, `vckvpc-<run>-<instance id>`. */
export function runNames(runId: string): RunNames {
  const base = `${VPC_NETNS_PREFIX}${runId}-`;
  return {
    runId,
    router: `${base}rtr`,
    internet: `${base}inet`,
    instance: (instanceId) => `${base}${instanceId}`,
  };
}

/** The run id a namespace name belongs to, or `undefined` when it is not one of ours. */
export function runIdOfNetns(name: string): string | undefined {
  if (!name.startsWith(VPC_NETNS_PREFIX)) return undefined;
  const id = name.slice(VPC_NETNS_PREFIX.length, VPC_NETNS_PREFIX.length + 8);
  return isRunId(id) && name.charAt(VPC_NETNS_PREFIX.length + 8) === '-' ? id : undefined;
}
