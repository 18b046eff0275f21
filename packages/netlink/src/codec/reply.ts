import { decodeError, NetlinkError } from '../errors.js';
import { NLM_F_DUMP_INTR, NLMSG_DONE, NLMSG_ERROR, NLMSG_NOOP, NLMSG_OVERRUN } from './constants.js';
import { type NlMessage, parseErrorPayload, parseMessages } from './message.js';

/**
 * Collects the replies to one request: checks sequence number and port id (stale or foreign messages are
 * counted and dropped), stops at the ACK, the error or NLMSG_DONE, and notes NLM_F_DUMP_INTR.
 * Pure: it is fed datagrams and never does I/O.
 * @internal
 */
export class ReplyCollector {
  /** Data messages that belong to the request, in order. */
  readonly messages: NlMessage[] = [];
  /** True once any reply carried NLM_F_DUMP_INTR: the dump may be inconsistent. */
  interrupted = false;
  /** True once the request is finished (ACK, error or NLMSG_DONE). */
  done = false;
  /** Positive errno when the kernel refused the request. */
  errno = 0;
  /** Extended-ACK text that came with the ACK or error. */
  extack: string | undefined;
  /** Messages dropped because their sequence number or port id did not match. */
  dropped = 0;

  constructor(
    readonly seq: number,
    readonly portId: number,
    readonly dump: boolean,
  ) {}

  /** Feeds one received datagram; returns {@link ReplyCollector.done}. */
  feed(datagram: Buffer): boolean {
    for (const m of parseMessages(datagram)) {
      if (this.done) break;
      if (m.seq !== this.seq || (this.portId !== 0 && m.pid !== this.portId)) {
        this.dropped++;
        continue;
      }
      if ((m.flags & NLM_F_DUMP_INTR) !== 0) this.interrupted = true;
      switch (m.type) {
        case NLMSG_NOOP:
          break;
        case NLMSG_ERROR: {
          const e = parseErrorPayload(m.payload, m.flags);
          this.errno = e.errno;
          this.extack = e.extack;
          this.done = true;
          break;
        }
        case NLMSG_DONE: {
          if (m.payload.length >= 4) {
            const status = m.payload.readInt32LE(0);
            if (status < 0) this.errno = -status;
          }
          this.done = true;
          break;
        }
        case NLMSG_OVERRUN:
          throw new NetlinkError({ code: 'PROTOCOL_ERROR', op: 'recv', detail: 'NLMSG_OVERRUN' });
        default:
          if (m.type < 16) throw decodeError(`unexpected control message type ${m.type}`);
          this.messages.push(m);
      }
    }
    return this.done;
  }
}
