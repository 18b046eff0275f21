import { describe, expect, it } from 'vitest';
import { attrString, attrU32 } from '../src/codec/attrs.js';
import {
  NLM_F_ACK_TLVS,
  NLM_F_CAPPED,
  NLM_F_MULTI,
  NLMSG_DONE,
  NLMSG_ERROR,
  NLMSGERR_ATTR_MSG,
  RTM_GETLINK,
  RTM_NEWLINK,
  RTM_NEWROUTE,
} from '../src/codec/constants.js';
import { ifinfomsg } from '../src/codec/link.js';
import { encodeMessage } from '../src/codec/message.js';
import { EAGAIN, EINTR, type Libc, MSG_DONTWAIT, MSG_PEEK, MSG_TRUNC, SO_RCVTIMEO } from '../src/ffi/libc.js';
import { isNetlinkError } from '../src/index.js';
import { NetlinkSocket, type NlRequest } from '../src/socket.js';

type Reply = (req: { type: number; seq: number; pid: number }) => Buffer[];

/**
 * A hand-written fake of the libc port with a scripted "kernel": `send` queues the datagrams `reply`
 * returns, `recv` honours MSG_PEEK / MSG_TRUNC / MSG_DONTWAIT, can be told to fail with EINTR a few times,
 * and reports EAGAIN (what SO_RCVTIMEO does) when nothing is queued, advancing the fake clock.
 */
class FakeLibc {
  now = 0;
  timeoutMs = 0;
  eintr = 0;
  queue: Buffer[] = [];
  rcvtimeoSets = 0;
  private err = 0;
  readonly portId = 4242;

  constructor(public reply: Reply) {}

  libc(): Libc {
    const native = <A extends unknown[], R>(f: (...a: A) => R) =>
      Object.assign(f, {
        async: (...args: unknown[]) => {
          const cb = args.pop() as (e: unknown, r: R) => void;
          setImmediate(() => cb(null, f(...(args as A))));
        },
      });
    const fail = native((..._a: unknown[]) => {
      this.err = 1;
      return -1;
    });
    return {
      socket: native(() => 7),
      bind: native(() => 0),
      getsockname: native((_fd: number, sa: Buffer) => {
        sa.writeUInt32LE(this.portId, 4);
        return 0;
      }),
      setsockopt: native((_fd: number, level: number, name: number, v: Buffer) => {
        if (level === 1 && name === SO_RCVTIMEO) {
          this.timeoutMs = Number(v.readBigInt64LE(0)) * 1000 + Number(v.readBigInt64LE(8)) / 1000;
          this.rcvtimeoSets++;
        }
        return 0;
      }),
      send: native((_fd: number, buf: Buffer, len: number) => {
        const m = buf.subarray(0, len);
        this.queue.push(...this.reply({ type: m.readUInt16LE(4), seq: m.readUInt32LE(8), pid: this.portId }));
        return len;
      }),
      recv: native((_fd: number, buf: Buffer | null, len: number, flags: number) => {
        if (this.eintr > 0) {
          this.eintr--;
          this.now += 10;
          this.err = EINTR;
          return -1;
        }
        const d = this.queue[0];
        if (d === undefined) {
          if ((flags & MSG_DONTWAIT) === 0) this.now += this.timeoutMs;
          this.err = EAGAIN;
          return -1;
        }
        const n = Math.min(len, d.length);
        if (buf) buf.set(d.subarray(0, n));
        if ((flags & MSG_PEEK) === 0) this.queue.shift();
        return (flags & MSG_TRUNC) !== 0 ? d.length : n;
      }),
      close: native(() => 0),
      setns: fail,
      unshare: fail,
      mount: fail,
      umount2: fail,
      errno: () => this.err,
    } as unknown as Libc;
  }
}

const ack = (seq: number, pid: number, errno = 0, extack?: string) => {
  const e = Buffer.alloc(4);
  e.writeInt32LE(-errno, 0);
  const echoed = encodeMessage({ type: RTM_NEWROUTE, flags: 5, seq, pid: 0 }, []);
  const tlvs = extack === undefined ? [] : [attrString(NLMSGERR_ATTR_MSG, extack)];
  const flags = extack === undefined ? 0 : NLM_F_CAPPED | NLM_F_ACK_TLVS;
  return encodeMessage({ type: NLMSG_ERROR, flags, seq, pid }, [e, echoed, ...tlvs]);
};

const addRoute: NlRequest = {
  op: 'route.add',
  type: RTM_NEWROUTE,
  flags: 0,
  body: [Buffer.alloc(12)],
  dump: false,
};
const dumpLinks: NlRequest = {
  op: 'link.list',
  type: RTM_GETLINK,
  flags: 0,
  body: [ifinfomsg({})],
  dump: true,
};

function open(fake: FakeLibc, timeoutMs = 1000): NetlinkSocket {
  return NetlinkSocket.open({ timeoutMs, clock: () => fake.now }, fake.libc());
}

describe('NetlinkSocket against a fake libc', () => {
  it('binds, learns its port id and gets an ACK (sync and async)', async () => {
    const fake = new FakeLibc(({ seq, pid }) => [ack(seq, pid)]);
    const s = open(fake);
    expect(s.portId).toBe(4242);
    expect(s.requestSync(addRoute)).toEqual({ messages: [], interrupted: false });
    await expect(s.request(addRoute)).resolves.toEqual({ messages: [], interrupted: false });
  });

  it('drops stale replies (old sequence numbers, other port ids) before the real one', () => {
    const fake = new FakeLibc(({ seq, pid }) => [
      ack(seq - 1, pid, 17),
      ack(seq, pid + 1, 17),
      ack(seq, pid),
    ]);
    expect(open(fake).requestSync(addRoute).messages).toEqual([]);
  });

  it('grows the receive buffer to fit a datagram larger than 32 KiB', () => {
    const big = (seq: number, pid: number) =>
      encodeMessage({ type: RTM_NEWLINK, flags: NLM_F_MULTI, seq, pid }, [
        ifinfomsg({ index: 3 }),
        attrString(3, 'big0'),
        ...Array.from({ length: 5000 }, () => attrU32(40, 1)),
      ]);
    const fake = new FakeLibc(({ seq, pid }) => [
      big(seq, pid),
      encodeMessage({ type: NLMSG_DONE, flags: NLM_F_MULTI, seq, pid }, [Buffer.alloc(4)]),
    ]);
    const reply = open(fake).requestSync(dumpLinks);
    expect(reply.messages).toHaveLength(1);
    expect(reply.messages[0]!.payload.length).toBeGreaterThan(32 * 1024);
  });

  it('retries EINTR within the deadline, shortening SO_RCVTIMEO to what is left', async () => {
    const fake = new FakeLibc(({ seq, pid }) => [ack(seq, pid)]);
    const s = open(fake);
    const before = fake.rcvtimeoSets;
    fake.eintr = 3;
    s.requestSync(addRoute);
    expect(fake.rcvtimeoSets - before).toBe(3);
    expect(fake.timeoutMs).toBeLessThan(1000);
    fake.eintr = 2;
    await s.request(addRoute);
  });

  it('times out with TIMEOUT when the kernel never answers, or when EINTRs use up the deadline', async () => {
    const fake = new FakeLibc(() => []);
    const s = open(fake, 50);
    expect(() => s.requestSync(addRoute)).toThrow(
      expect.objectContaining({ code: 'TIMEOUT', op: 'route.add' }),
    );
    await expect(s.request(addRoute)).rejects.toSatisfy((e) => isNetlinkError(e, 'TIMEOUT'));
    fake.reply = ({ seq, pid }) => [ack(seq, pid)];
    fake.eintr = 10;
    expect(() => s.requestSync(addRoute)).toThrow(expect.objectContaining({ code: 'TIMEOUT' }));
  });

  it('turns a kernel error into an errno-coded NetlinkError with the extended ACK', () => {
    const fake = new FakeLibc(({ seq, pid }) => [ack(seq, pid, 101, 'Nexthop has invalid gateway')]);
    expect(() => open(fake).requestSync(addRoute)).toThrow(
      expect.objectContaining({
        code: 'ENETUNREACH',
        errno: 101,
        op: 'route.add',
        extack: 'Nexthop has invalid gateway',
      }),
    );
  });

  it('refuses requests after close with CLOSED', async () => {
    const fake = new FakeLibc(({ seq, pid }) => [ack(seq, pid)]);
    const s = open(fake);
    s.closeSync();
    expect(() => s.requestSync(addRoute)).toThrow(expect.objectContaining({ code: 'CLOSED' }));
    const t = open(fake);
    const inFlight = t.request(addRoute);
    t.close();
    await expect(inFlight).resolves.toBeDefined();
    await expect(t.request(addRoute)).rejects.toSatisfy((e) => isNetlinkError(e, 'CLOSED'));
  });
});
