import { describe, expect, it } from 'vitest';
import { NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST } from '../src/codec/constants.js';
import { encodeMessage } from '../src/codec/message.js';
import { type Op, runSync } from '../src/ops/driver.js';
import type { NlRequest } from '../src/socket.js';

/** Runs an operation against a recorder (no kernel) and returns the requests it would send. */
export function requestsOf<T>(op: Op<T>, answer?: (r: NlRequest) => Buffer[]): NlRequest[] {
  const seen: NlRequest[] = [];
  runSync(op, (r) => {
    seen.push(r);
    return {
      messages: (answer?.(r) ?? []).map((payload) => ({ type: 0, flags: 0, seq: 0, pid: 0, payload })),
      interrupted: false,
    };
  });
  return seen;
}

/** The bytes of a request as the socket would send them, with sequence number and port id zeroed. */
export function wire(r: NlRequest): string {
  const flags = NLM_F_REQUEST | (r.dump ? NLM_F_DUMP : NLM_F_ACK) | r.flags;
  return encodeMessage({ type: r.type, flags, seq: 0, pid: 0 }, r.body).toString('hex');
}

/** Zeroes nlmsg_seq and nlmsg_pid in a captured request (hex). */
export function masked(hex: string): string {
  return `${hex.slice(0, 16)}${'0'.repeat(16)}${hex.slice(32)}`;
}

/** A capture of iproute2's requests: each named case's last request, as hex. */
export interface IprouteCapture {
  /** Captured requests. */
  readonly requests: readonly {
    readonly name: string;
    readonly argv: readonly string[];
    readonly hex: string;
  }[];
}

/**
 * Declares the golden-bytes tests of a capture: `cases` builds each captured command through our operations and
 * its last request must match iproute2's byte for byte (sequence number and port id aside).
 */
export function describeGolden(
  title: string,
  capture: IprouteCapture,
  cases: Record<string, () => Op<unknown>>,
): void {
  describe(title, () => {
    it('covers every captured command', () => {
      expect(Object.keys(cases).sort()).toEqual(capture.requests.map((r) => r.name).sort());
    });
    for (const r of capture.requests) {
      it(`${r.name}: ${r.argv.join(' ')}`, () => {
        const reqs = requestsOf(cases[r.name]!());
        expect(wire(reqs.at(-1)!)).toBe(masked(r.hex));
      });
    }
  });
}
