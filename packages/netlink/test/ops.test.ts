import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { attr, attrString, attrU32, parseAttrs } from '../src/codec/attrs.js';
import {
  IFLA_EXT_MASK,
  IFLA_IFNAME,
  RTEXT_FILTER_SKIP_STATS,
  RTM_GETLINK,
  RTM_NEWADDR,
  RTM_NEWLINK,
} from '../src/codec/constants.js';
import { ifinfomsg } from '../src/codec/link.js';
import * as addr from '../src/ops/addr.js';
import { runAsync, runSync } from '../src/ops/driver.js';
import * as link from '../src/ops/link.js';
import type { NlReply, NlRequest } from '../src/socket.js';

const linkPayload = (index: number, name: string) =>
  Buffer.concat([ifinfomsg({ index }), attrString(3, name)]);
const reply = (payloads: Buffer[], interrupted = false): NlReply => ({
  messages: payloads.map((payload) => ({ type: RTM_NEWLINK, flags: 0, seq: 1, pid: 1, payload })),
  interrupted,
});

describe('operations as request sequences', () => {
  it('resolves a link name with one RTM_GETLINK, then sends the request with the index', () => {
    const seen: NlRequest[] = [];
    runSync(addr.addrAdd({ dev: 'eth0', address: '10.0.0.5/32' }), (r) => {
      seen.push(r);
      return r.type === RTM_GETLINK ? reply([linkPayload(7, 'eth0')]) : reply([]);
    });
    expect(seen.map((r) => r.type)).toEqual([RTM_GETLINK, RTM_NEWADDR]);
    expect(Buffer.from(seen[1]!.body[0]!).readUInt32LE(4)).toBe(7);
  });

  it('passes NLM_F_DUMP_INTR through as a flag on the list, keeping the items (sync and async)', async () => {
    const answer = () => reply([linkPayload(1, 'lo'), linkPayload(2, 'eth0')], true);
    const list = runSync(link.linkList(), answer);
    expect(list.map((l) => l.name)).toEqual(['lo', 'eth0']);
    expect(list.interrupted).toBe(true);
    const again = await runAsync(link.linkList(), async () => reply([linkPayload(1, 'lo')]));
    expect(again.interrupted).toBe(false);
    expect(Object.keys(again)).toEqual(['0']); // the flag is not an enumerable item
  });

  it.runIf(process.platform === 'linux')(
    'throws kernel errors into the operation, whose cleanup closes the namespace fd it opened',
    () => {
      const fds = () => readdirSync('/proc/self/fd').length;
      const before = fds();
      const boom = Object.assign(new Error('refused'), { code: 'EPERM' });
      expect(() =>
        runSync(
          link.linkAdd({ kind: 'veth', name: 'v0', peer: { name: 'v1', netns: '/proc/self/ns/net' } }),
          () => {
            expect(fds()).toBe(before + 1);
            throw boom;
          },
        ),
      ).toThrow(boom);
      expect(fds()).toBe(before);
    },
  );

  it('asks the kernel to leave link counters out of every link read (dump, get, name lookup)', () => {
    const seen: NlRequest[] = [];
    const answer = (r: NlRequest) => {
      seen.push(r);
      return r.type === RTM_GETLINK ? reply([linkPayload(7, 'eth0')]) : reply([]);
    };
    runSync(link.linkList(), answer);
    runSync(link.linkGet('eth0'), answer);
    runSync(link.linkGet(7), answer);
    runSync(addr.addrAdd({ dev: 'eth0', address: '10.0.0.5/32' }), answer);
    const gets = seen.filter((r) => r.type === RTM_GETLINK);
    expect(gets).toHaveLength(4);
    for (const r of gets) {
      const attrs = parseAttrs(Buffer.concat(r.body.slice(1)));
      expect(attrs.get(IFLA_EXT_MASK)?.readUInt32LE(0)).toBe(RTEXT_FILTER_SKIP_STATS);
    }
    expect(
      parseAttrs(Buffer.concat(gets[1]!.body.slice(1)))
        .get(IFLA_IFNAME)
        ?.toString(),
    ).toBe('eth0\0');
  });

  it('sets a link given by name in one RTM_NEWLINK (IFLA_IFNAME, index 0); a rename resolves the index first', () => {
    const seen: NlRequest[] = [];
    const answer = (r: NlRequest) => {
      seen.push(r);
      return r.type === RTM_GETLINK ? reply([linkPayload(7, 'eth0')]) : reply([]);
    };
    runSync(link.linkSet('eth0', { up: true, mtu: 1400 }), answer);
    expect(seen.map((r) => r.type)).toEqual([RTM_NEWLINK]);
    const body = Buffer.concat(seen[0]!.body);
    expect(body.readInt32LE(4)).toBe(0);
    expect(parseAttrs(body, 16).get(IFLA_IFNAME)?.toString()).toBe('eth0\0');
    seen.length = 0;
    runSync(link.linkSet('eth0', { name: 'eth9' }), answer);
    expect(seen.map((r) => r.type)).toEqual([RTM_GETLINK, RTM_NEWLINK]);
    const renamed = Buffer.concat(seen[1]!.body);
    expect(renamed.readInt32LE(4)).toBe(7);
    expect(parseAttrs(renamed, 16).get(IFLA_IFNAME)?.toString()).toBe('eth9\0');
    expect(() => runSync(link.linkSet('bad name', { up: true }), answer)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });

  it('decodes a link whatever other attributes come with it', () => {
    const payload = Buffer.concat([
      ifinfomsg({ index: 3 }),
      attrU32(7, 1), // IFLA_QDISC-like noise
      attrString(3, 'veth1'),
      attrU32(4, 9001),
      attr(26, Buffer.alloc(300)), // IFLA_AF_SPEC-sized noise
    ]);
    const [l] = runSync(link.linkList(), () => reply([payload]));
    expect(l).toMatchObject({ index: 3, name: 'veth1', mtu: 9001 });
  });

  it('reports a missing link message as PROTOCOL_ERROR', () => {
    expect(() => runSync(link.linkGet('eth0'), () => reply([]))).toThrow(
      expect.objectContaining({ code: 'PROTOCOL_ERROR', op: 'link.get' }),
    );
  });
});
