import { describe, expect, it } from 'vitest';
import { encodeAddr } from '../src/codec/addr.js';
import { attr, attrNested, attrString, attrU32, parseAttrs, parseAttrsOf } from '../src/codec/attrs.js';
import {
  IFF_UP,
  NLM_F_ACK_TLVS,
  NLM_F_CAPPED,
  NLM_F_DUMP_INTR,
  NLM_F_MULTI,
  NLMSG_DONE,
  NLMSG_ERROR,
  NLMSG_OVERRUN,
  NLMSGERR_ATTR_MSG,
  NLMSGERR_ATTR_OFFS,
  RTM_NEWADDR,
  RTM_NEWLINK,
  RTM_NEWNEIGH,
  RTM_NEWROUTE,
  RTM_NEWRULE,
} from '../src/codec/constants.js';
import { encodeLinkAttrs, encodeLinkInfo, ifinfomsg } from '../src/codec/link.js';
import { encodeMessage, parseErrorPayload, parseMessages } from '../src/codec/message.js';
import { encodeNeigh } from '../src/codec/neigh.js';
import { ReplyCollector } from '../src/codec/reply.js';
import { encodeRoute } from '../src/codec/route.js';
import { encodeRule } from '../src/codec/rule.js';
import { decodeRtnetlink, isNetlinkError, parseIp, parseMac } from '../src/index.js';

const ip = (s: string) => parseIp(s)!;

function errorMessage(seq: number, pid: number, errno: number, extack?: string): Buffer {
  const tlvs =
    extack === undefined ? [] : [attrString(NLMSGERR_ATTR_MSG, extack), attrU32(NLMSGERR_ATTR_OFFS, 36)];
  const echoed = encodeMessage({ type: RTM_NEWROUTE, flags: 5, seq, pid: 0 }, []);
  const err = Buffer.alloc(4);
  err.writeInt32LE(-errno, 0);
  const flags = extack === undefined ? 0 : NLM_F_CAPPED | NLM_F_ACK_TLVS;
  return encodeMessage({ type: NLMSG_ERROR, flags, seq, pid }, [err, echoed, ...tlvs]);
}

describe('attributes', () => {
  it('pads to 4 bytes and nests', () => {
    const a = attrString(3, 'eth0');
    expect(a.toString('hex')).toBe('09000300657468300000000000000000'.slice(0, 24));
    const n = attrNested(18, [attr(1, Buffer.from('veth')), attrU32(2, 7)]);
    const top = parseAttrs(n);
    const inner = parseAttrs(top.get(18)!);
    expect(inner.get(1)!.toString()).toBe('veth');
    expect(inner.get(2)!.readUInt32LE(0)).toBe(7);
  });

  it('masks NLA_F_NESTED and rejects overruns', () => {
    const b = attrU32(0x8000 | 5, 1);
    expect(parseAttrs(b).has(5)).toBe(true);
    const bad = Buffer.from('0c000100aabbccdd', 'hex');
    expect(() => parseAttrs(bad)).toThrow(expect.objectContaining({ code: 'DECODE_ERROR' }));
    const short = Buffer.from('02000100', 'hex');
    expect(() => parseAttrs(short)).toThrow(expect.objectContaining({ code: 'DECODE_ERROR' }));
  });

  it('keeps only the wanted types, but still checks the length of every attribute', () => {
    const wanted = new Uint8Array(8);
    wanted[3] = 1;
    const b = Buffer.concat([attrU32(4, 1500), attrString(3, 'eth0'), attrU32(7, 9)]);
    const m = parseAttrsOf(b, 0, b.length, wanted);
    expect([...m.keys()]).toEqual([3]);
    expect(m.get(3)!.toString('utf8', 0, 4)).toBe('eth0');
    expect([...parseAttrsOf(b, 0, b.length, undefined).keys()]).toEqual([4, 3, 7]);
    // An unwanted attribute running past the end is still malformed input.
    const bad = Buffer.concat([attrString(3, 'eth0'), Buffer.from('0c000400aabbccdd', 'hex')]);
    expect(() => parseAttrsOf(bad, 0, bad.length, wanted)).toThrow(
      expect.objectContaining({ code: 'DECODE_ERROR' }),
    );
  });
});

describe('messages', () => {
  it('splits a datagram and checks lengths', () => {
    const d = Buffer.concat([
      encodeMessage({ type: RTM_NEWLINK, flags: NLM_F_MULTI, seq: 7, pid: 9 }, [ifinfomsg({ index: 1 })]),
      encodeMessage({ type: NLMSG_DONE, flags: NLM_F_MULTI, seq: 7, pid: 9 }, [Buffer.alloc(4)]),
    ]);
    const ms = parseMessages(d);
    expect(ms.map((m) => [m.type, m.seq, m.pid, m.payload.length])).toEqual([
      [RTM_NEWLINK, 7, 9, 16],
      [NLMSG_DONE, 7, 9, 4],
    ]);
    const broken = Buffer.from(d);
    broken.writeUInt32LE(9999, 0);
    expect(() => parseMessages(broken)).toThrow(expect.objectContaining({ code: 'DECODE_ERROR' }));
    expect(() => parseMessages(d.subarray(0, 10))).toThrow(expect.objectContaining({ code: 'DECODE_ERROR' }));
  });

  it('reads the extended ACK text and offset', () => {
    const m = parseMessages(errorMessage(3, 4, 101, 'Nexthop has invalid gateway'))[0]!;
    expect(parseErrorPayload(m.payload, m.flags)).toEqual({
      errno: 101,
      extack: 'Nexthop has invalid gateway',
      extackOffset: 36,
    });
    const plain = parseMessages(errorMessage(3, 4, 0))[0]!;
    expect(parseErrorPayload(plain.payload, plain.flags)).toEqual({ errno: 0 });
  });
});

describe('reply collection', () => {
  it('drops replies with a foreign sequence number or port id, stops at the ACK', () => {
    const c = new ReplyCollector(5, 100, false);
    expect(c.feed(errorMessage(4, 100, 0))).toBe(false);
    expect(c.feed(errorMessage(5, 101, 0))).toBe(false);
    expect(c.dropped).toBe(2);
    expect(c.feed(errorMessage(5, 100, 17, 'File exists'))).toBe(true);
    expect(c.errno).toBe(17);
    expect(c.extack).toBe('File exists');
  });

  it('collects a multipart dump and flags NLM_F_DUMP_INTR', () => {
    const c = new ReplyCollector(9, 1, true);
    const part = (flags: number, index: number) =>
      encodeMessage({ type: RTM_NEWLINK, flags: NLM_F_MULTI | flags, seq: 9, pid: 1 }, [
        ifinfomsg({ index }),
      ]);
    expect(c.feed(Buffer.concat([part(0, 1), part(0, 2)]))).toBe(false);
    expect(c.feed(part(NLM_F_DUMP_INTR, 3))).toBe(false);
    const done = encodeMessage({ type: NLMSG_DONE, flags: NLM_F_MULTI | NLM_F_DUMP_INTR, seq: 9, pid: 1 }, [
      Buffer.alloc(4),
    ]);
    expect(c.feed(done)).toBe(true);
    expect(c.messages.length).toBe(3);
    expect(c.interrupted).toBe(true);
    expect(c.errno).toBe(0);
  });

  it('reports an error carried by NLMSG_DONE and a typed overrun', () => {
    const c = new ReplyCollector(1, 1, true);
    const status = Buffer.alloc(4);
    status.writeInt32LE(-16, 0);
    c.feed(encodeMessage({ type: NLMSG_DONE, flags: NLM_F_MULTI, seq: 1, pid: 1 }, [status]));
    expect(c.errno).toBe(16);
    const o = new ReplyCollector(1, 1, true);
    let caught: unknown;
    try {
      o.feed(encodeMessage({ type: NLMSG_OVERRUN, flags: 0, seq: 1, pid: 1 }, []));
    } catch (e) {
      caught = e;
    }
    expect(isNetlinkError(caught, 'PROTOCOL_ERROR')).toBe(true);
  });
});

describe('decodeRtnetlink', () => {
  it('decodes each message kind it encodes', () => {
    const linkMsg = encodeMessage({ type: RTM_NEWLINK, flags: 0, seq: 1, pid: 0 }, [
      ifinfomsg({ index: 4, flags: IFF_UP }),
      ...encodeLinkAttrs({
        name: 'vlan5',
        mtu: 9001,
        address: parseMac('02:00:00:00:00:05')!,
        parentIndex: 2,
      }),
      encodeLinkInfo({ kind: 'vlan', id: 5, protocol: 0x88a8 }),
    ]);
    const addrMsg = encodeMessage({ type: RTM_NEWADDR, flags: 0, seq: 1, pid: 0 }, [
      ...encodeAddr({ family: 4, index: 4, local: ip('10.0.0.5'), prefixLength: 32, scope: 0, flags: 0x280 }),
    ]);
    const routeMsg = encodeMessage({ type: RTM_NEWROUTE, flags: 0, seq: 1, pid: 0 }, [
      ...encodeRoute({
        family: 6,
        dst: ip('2001:db8::'),
        dstLength: 64,
        table: 1000,
        protocol: 3,
        scope: 0,
        type: 1,
        flags: 4,
        gateway: ip('fe80::1'),
        oif: 4,
        priority: 7,
      }),
    ]);
    const ruleMsg = encodeMessage({ type: RTM_NEWRULE, flags: 0, seq: 1, pid: 0 }, [
      ...encodeRule({
        family: 4,
        action: 1,
        table: 1000,
        priority: 1536,
        src: ip('10.0.0.5'),
        srcLength: 32,
        dstLength: 0,
        fwmark: 0x80,
        fwmask: 0x80,
        iif: 'eth0',
        invert: true,
      }),
    ]);
    const neighMsg = encodeMessage({ type: RTM_NEWNEIGH, flags: 0, seq: 1, pid: 0 }, [
      ...encodeNeigh({
        family: 4,
        index: 4,
        state: 0x80,
        flags: 0,
        dst: ip('169.254.1.1'),
        lladdr: parseMac('02:00:00:00:00:01')!,
      }),
    ]);
    const out = decodeRtnetlink(Buffer.concat([linkMsg, addrMsg, routeMsg, ruleMsg, neighMsg]));
    expect(out.map((m) => m.kind)).toEqual(['link', 'addr', 'route', 'rule', 'neigh']);
    const [l, a, r, u, n] = out;
    expect(l).toMatchObject({
      link: {
        index: 4,
        name: 'vlan5',
        mtu: 9001,
        up: true,
        kind: 'vlan',
        vlanId: 5,
        vlanProtocol: '802.1ad',
        parentIndex: 2,
      },
    });
    expect(a).toMatchObject({
      addr: { family: 4, address: '10.0.0.5', prefixLength: 32, cidr: '10.0.0.5/32', flags: 0x280 },
    });
    expect(r).toMatchObject({
      route: {
        family: 6,
        dst: '2001:db8::/64',
        table: 1000,
        gateway: 'fe80::1',
        oif: 4,
        onlink: true,
        priority: 7,
      },
    });
    expect(u).toMatchObject({
      rule: {
        family: 4,
        table: 1000,
        priority: 1536,
        from: '10.0.0.5/32',
        fwmark: 0x80,
        fwmask: 0x80,
        iif: 'eth0',
        invert: true,
      },
    });
    expect(n).toMatchObject({
      neigh: { address: '169.254.1.1', lladdr: '02:00:00:00:00:01', state: 0x80, index: 4 },
    });
  });

  it('decodes an error with its extended ACK', () => {
    expect(decodeRtnetlink(errorMessage(2, 3, 95, 'Unknown device type'))).toEqual([
      {
        type: NLMSG_ERROR,
        flags: NLM_F_CAPPED | NLM_F_ACK_TLVS,
        seq: 2,
        pid: 3,
        kind: 'error',
        errno: 95,
        extack: 'Unknown device type',
      },
    ]);
  });

  it('rejects a short family header with DECODE_ERROR', () => {
    const m = encodeMessage({ type: RTM_NEWROUTE, flags: 0, seq: 1, pid: 0 }, [Buffer.alloc(4)]);
    expect(() => decodeRtnetlink(m)).toThrow(expect.objectContaining({ code: 'DECODE_ERROR' }));
  });
});
