import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attr, attrNested, attrU32 } from '../src/codec/attrs.js';
import {
  NLMSG_ERROR,
  RTM_NEWADDR,
  RTM_NEWLINK,
  RTM_NEWNEIGH,
  RTM_NEWROUTE,
  RTM_NEWRULE,
} from '../src/codec/constants.js';
import { encodeMessage } from '../src/codec/message.js';
import { ReplyCollector } from '../src/codec/reply.js';
import { decodeRtnetlink, isNetlinkError } from '../src/index.js';

/** The decoder's contract: a value or a typed DECODE_ERROR / PROTOCOL_ERROR, never anything else. */
function decodesOrTypedError(bytes: Uint8Array): void {
  try {
    decodeRtnetlink(Buffer.from(bytes));
  } catch (e) {
    if (!isNetlinkError(e, 'DECODE_ERROR', 'PROTOCOL_ERROR')) throw e;
  }
}

const types = fc.constantFrom(
  1,
  2,
  3,
  4,
  RTM_NEWLINK,
  17,
  RTM_NEWADDR,
  RTM_NEWROUTE,
  RTM_NEWNEIGH,
  RTM_NEWRULE,
  99,
);

// Structurally plausible messages: a valid header around random (possibly nested) attributes, so the fuzzer
// reaches the per-family decoders instead of failing at the first length check.
const attrBytes: fc.Arbitrary<Buffer> = fc.letrec((tie) => ({
  leaf: fc
    .tuple(fc.integer({ min: 0, max: 60 }), fc.uint8Array({ maxLength: 24 }))
    .map(([t, v]) => attr(t, v)),
  nested: fc
    .tuple(fc.integer({ min: 0, max: 60 }), fc.array(tie('node') as fc.Arbitrary<Buffer>, { maxLength: 4 }))
    .map(([t, kids]) => attrNested(t, kids)),
  node: fc.oneof({ depthSize: 'small' }, tie('leaf'), tie('nested')),
})).node as fc.Arbitrary<Buffer>;

const plausible = fc
  .tuple(
    types,
    fc.integer({ min: 0, max: 0xffff }),
    fc.uint8Array({ minLength: 0, maxLength: 20 }),
    fc.array(attrBytes, { maxLength: 8 }),
  )
  .map(([type, flags, header, attrs]) => encodeMessage({ type, flags, seq: 1, pid: 1 }, [header, ...attrs]));

describe('decoder fuzzing', () => {
  it('arbitrary bytes: value or typed error', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (b) => decodesOrTypedError(b)),
      { numRuns: 3000 },
    );
  });

  it('well-framed messages with random attributes: value or typed error', () => {
    fc.assert(
      fc.property(fc.array(plausible, { minLength: 1, maxLength: 4 }), (ms) =>
        decodesOrTypedError(Buffer.concat(ms)),
      ),
      { numRuns: 3000 },
    );
  });

  it('a single flipped or truncated byte in a real message: value or typed error', () => {
    const base = encodeMessage({ type: RTM_NEWLINK, flags: 2, seq: 1, pid: 1 }, [
      Buffer.alloc(16),
      attr(3, Buffer.from('eth0\0')),
      attrU32(4, 1500),
      attrNested(18, [attr(1, Buffer.from('veth')), attrNested(2, [attrNested(1, [Buffer.alloc(16)])])]),
    ]);
    fc.assert(
      fc.property(fc.nat(base.length - 1), fc.nat(255), fc.nat(base.length), (i, v, cut) => {
        const b = Buffer.from(base);
        b[i] = v;
        decodesOrTypedError(b.subarray(0, cut));
      }),
      { numRuns: 3000 },
    );
  });

  it('the reply collector never throws anything but typed errors', () => {
    fc.assert(
      fc.property(fc.array(plausible, { maxLength: 4 }), fc.boolean(), (ms, dump) => {
        const c = new ReplyCollector(1, 1, dump);
        try {
          for (const m of ms) c.feed(m);
        } catch (e) {
          expect(isNetlinkError(e, 'DECODE_ERROR', 'PROTOCOL_ERROR')).toBe(true);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('terminates on zero-length attributes (no infinite loop)', () => {
    const m = encodeMessage({ type: NLMSG_ERROR, flags: 0x300, seq: 1, pid: 1 }, [
      Buffer.alloc(4),
      encodeMessage({ type: 16, flags: 0, seq: 1, pid: 0 }, []),
      Buffer.from('00000000', 'hex'),
    ]);
    decodesOrTypedError(m);
  });
});
