import type { EniContext } from './context.js';
import { describeEni } from './describe.js';
import type { Ec2Eni } from './ec2/eni.js';
import { eniError, isEniManagerError } from './errors.js';
import { pollUntil } from './poll.js';

/** How freeing an ENI ended: deleted by this call, or found already gone (success either way). */
export type FreeEniOutcome = 'deleted' | 'already-gone';

/**
 * Detaches (when attached), waits until EC2 reports the ENI `available`, then deletes it, retrying while EC2 still
 * calls it in use. `NotFound` at any step means someone else finished the job: success.
 * `known` skips the first describe when the caller has just read the ENI.
 */
export async function freeEniSteps(ctx: EniContext, eniId: string, known?: Ec2Eni): Promise<FreeEniOutcome> {
  const eni = known ?? (await describeEni(ctx.ec2, eniId));
  if (eni === undefined) return 'already-gone';
  if (eni.attachment !== undefined && eni.status !== 'available') {
    try {
      await ctx.ec2.call('DetachNetworkInterface', { AttachmentId: eni.attachment.attachmentId });
    } catch (error) {
      if (isEniManagerError(error, 'InvalidNetworkInterfaceID.NotFound')) return 'already-gone';
      if (!isEniManagerError(error, 'InvalidAttachmentID.NotFound', 'IncorrectState')) throw error;
    }
    const waited = await pollUntil(
      async () => {
        const now = await describeEni(ctx.ec2, eniId);
        return { done: now === undefined || now.status === 'available', value: now };
      },
      {
        backoff: ctx.timings.detachBackoff,
        deadlineMs: ctx.timings.detachWaitMs,
        clock: ctx.clock,
        random: ctx.random,
      },
    );
    if (waited.value === undefined) return 'already-gone';
    if (!waited.done) {
      throw eniError(
        'DetachTimeout',
        `${eniId} still ${waited.value.status} after ${ctx.timings.detachWaitMs} ms`,
        {
          action: 'DetachNetworkInterface',
        },
      );
    }
  }
  return deleteEniWithRetries(ctx, eniId);
}

/** `DeleteNetworkInterface`, retried while the ENI is still in use; `NotFound` is success. */
export async function deleteEniWithRetries(ctx: EniContext, eniId: string): Promise<FreeEniOutcome> {
  let lastError: unknown;
  const result = await pollUntil(
    async () => {
      try {
        await ctx.ec2.call('DeleteNetworkInterface', { NetworkInterfaceId: eniId });
        return { done: true, value: 'deleted' as FreeEniOutcome };
      } catch (error) {
        if (isEniManagerError(error, 'InvalidNetworkInterfaceID.NotFound')) {
          return { done: true, value: 'already-gone' as FreeEniOutcome };
        }
        // In use: the detach has not finished yet (the wait above saw `available`, EC2 lags a moment).
        if (!isEniManagerError(error) || !(error.retryable || error.code === 'InvalidNetworkInterface.InUse'))
          throw error;
        lastError = error;
        return { done: false, value: 'deleted' as FreeEniOutcome };
      }
    },
    {
      backoff: ctx.timings.detachBackoff,
      deadlineMs: ctx.timings.detachWaitMs,
      clock: ctx.clock,
      random: ctx.random,
    },
  );
  if (!result.done) throw lastError;
  return result.value;
}

/**
 * Undoes a create that just happened. EC2 is eventually consistent: for a moment after `CreateNetworkInterface`,
 * Describe* and even Delete may answer `NotFound`, so here `NotFound` means "not visible yet" until the deadline
 * passes, never "already gone". Detaches first when the attachment is known; when Delete says the ENI is in use,
 * finds the attachment, detaches it, and tries again.
 */
export async function rollbackCreatedEni(
  ctx: EniContext,
  eniId: string,
  attachmentId: string | undefined,
): Promise<FreeEniOutcome> {
  let pendingDetach = attachmentId;
  let lastError: unknown;
  const result = await pollUntil(
    async () => {
      if (pendingDetach !== undefined) {
        try {
          await ctx.ec2.call('DetachNetworkInterface', { AttachmentId: pendingDetach });
          pendingDetach = undefined;
        } catch (error) {
          if (!isEniManagerError(error)) throw error;
          if (isEniManagerError(error, 'InvalidAttachmentID.NotFound', 'IncorrectState'))
            pendingDetach = undefined;
          else if (!error.retryable && error.code !== 'InvalidNetworkInterfaceID.NotFound') throw error;
          lastError = error;
          return { done: false, value: 'deleted' as FreeEniOutcome };
        }
      }
      try {
        await ctx.ec2.call('DeleteNetworkInterface', { NetworkInterfaceId: eniId });
        return { done: true, value: 'deleted' as FreeEniOutcome };
      } catch (error) {
        if (!isEniManagerError(error)) throw error;
        lastError = error;
        if (isEniManagerError(error, 'InvalidNetworkInterface.InUse', 'IncorrectState')) {
          const eni = await describeEni(ctx.ec2, eniId);
          if (eni?.attachment !== undefined && eni.attachment.status !== 'detaching') {
            pendingDetach = eni.attachment.attachmentId;
          }
          return { done: false, value: 'deleted' as FreeEniOutcome };
        }
        if (error.code === 'InvalidNetworkInterfaceID.NotFound' || error.retryable) {
          return { done: false, value: 'deleted' as FreeEniOutcome };
        }
        throw error;
      }
    },
    {
      backoff: ctx.timings.detachBackoff,
      deadlineMs: ctx.timings.detachWaitMs,
      clock: ctx.clock,
      random: ctx.random,
    },
  );
  if (result.done) return result.value;
  // NotFound until the deadline: someone else deleted it after all.
  if (isEniManagerError(lastError, 'InvalidNetworkInterfaceID.NotFound')) return 'already-gone';
  throw lastError;
}
