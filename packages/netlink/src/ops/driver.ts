import type { NlReply, NlRequest } from '../socket.js';

/**
 * An operation written once as a generator: it yields kernel requests and receives their replies, so the
 * same code runs on the blocking path and on the async path. Errors from a request are thrown into the
 * generator at the `yield`, so its `finally` blocks (closing namespace fds) always run.
 * @internal
 */
export type Op<T> = Generator<NlRequest, T, NlReply>;

/** Runs an operation synchronously. @internal */
export function runSync<T>(op: Op<T>, exec: (r: NlRequest) => NlReply): T {
  let step = op.next();
  while (!step.done) {
    let reply: NlReply;
    try {
      reply = exec(step.value);
    } catch (e) {
      step = op.throw(e);
      continue;
    }
    step = op.next(reply);
  }
  return step.value;
}

/** Runs an operation, awaiting each request. @internal */
export async function runAsync<T>(op: Op<T>, exec: (r: NlRequest) => Promise<NlReply>): Promise<T> {
  let step = op.next();
  while (!step.done) {
    let reply: NlReply;
    try {
      reply = await exec(step.value);
    } catch (e) {
      step = op.throw(e);
      continue;
    }
    step = op.next(reply);
  }
  return step.value;
}

/** A list from a dump, flagged when the kernel reported NLM_F_DUMP_INTR (it may be incomplete). */
export type DumpList<T> = T[] & {
  /**
   * True when the dump was interrupted by a concurrent change (NLM_F_DUMP_INTR): the items are real but
   * may be incomplete or inconsistent. Retry if you need a consistent view.
   */
  readonly interrupted: boolean;
};

/** @internal */
export function dumpList<T>(items: T[], interrupted: boolean): DumpList<T> {
  Object.defineProperty(items, 'interrupted', { value: interrupted, enumerable: false });
  return items as DumpList<T>;
}

/**
 * True for messages of the IP families. Dumps with AF_UNSPEC also return other families (IPMR/IP6MR
 * rules and routes, AF_BRIDGE fdb entries), which the IP-level lists leave out.
 * @internal
 */
export function isInet(payload: Buffer): boolean {
  const f = payload.length > 0 ? payload.readUInt8(0) : -1;
  return f === 2 || f === 10;
}
