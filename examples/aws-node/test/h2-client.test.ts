// The plugin's HTTP/2 client against an independent implementation: node:http2's server is nghttp2, which
// Huffman-codes header strings when that is shorter, indexes fields into its dynamic table and refers back
// to them from later blocks, splits large header blocks into CONTINUATION frames and can pad frames.
import { createServer, type Http2Server, constants as h2, type ServerHttp2Stream } from 'node:http2';
import { connect, createServer as createNetServer, type Server } from 'node:net';
import { join } from 'node:path';
import { scratchDir } from '@vpc-cni-kit/testkit';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { frame, GrpcStatus, isGrpcCallError, unaryCall } from '../src/rpc/grpc-client.js';
import { encodeFrame, Flag, FrameReader, FrameType } from '../src/rpc/h2/frames.js';
import { encodeHeaders, HpackDecoder, HpackError } from '../src/rpc/h2/hpack.js';
import { huffmanDecode } from '../src/rpc/h2/huffman.js';

const dir = scratchDir('vck-h2-');
afterAll(() => dir.remove());

let servers: Array<Http2Server | Server> = [];
const sessions = new Set<{ destroy(): void }>();
afterEach(async () => {
  for (const s of sessions) s.destroy();
  sessions.clear();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(() => r(undefined)))));
  servers = [];
});

let sockets = 0;
function socketPath(): string {
  sockets += 1;
  return join(dir.path, `s${sockets}.sock`);
}

type Handler = (stream: ServerHttp2Stream, body: Buffer, headers: Record<string, unknown>) => void;

/** An HTTP/2 server (nghttp2) on a unix socket that collects each request's body, then calls `handler`. */
async function h2Server(handler: Handler, options: Parameters<typeof createServer>[0] = {}): Promise<string> {
  const path = socketPath();
  const server = createServer(options);
  server.on('session', (session) => sessions.add(session));
  server.on('connection', (socket: { destroy(): void }) => sessions.add(socket));
  server.on('stream', (stream, headers) => {
    // Resets and lost connections are what several tests make happen.
    stream.on('error', () => {});
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => handler(stream, Buffer.concat(chunks), headers));
  });
  await new Promise<void>((r) => server.listen(path, r));
  servers.push(server);
  return path;
}

/** A gRPC-shaped success: headers, one framed message, trailers. */
function ok(stream: ServerHttp2Stream, message: Uint8Array, extraHeaders: Record<string, string> = {}): void {
  stream.respond(
    { ':status': 200, 'content-type': 'application/grpc', ...extraHeaders },
    { waitForTrailers: true },
  );
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': '' }));
  stream.end(frame(message));
}

async function callError(p: Promise<unknown>): Promise<{ grpcStatus: number; message: string }> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!isGrpcCallError(e)) throw new Error(`expected a GrpcCallError, got ${String(e)}`);
  return { grpcStatus: e.grpcStatus, message: e.message };
}

describe('Huffman decoding (RFC 7541 Appendix B)', () => {
  it('decodes the RFC 7541 C.4.1 example string', () => {
    const out = huffmanDecode(Buffer.from('f1e3c2e5f23a6ba0ab90f4ff', 'hex'));
    expect(typeof out === 'string' ? out : Buffer.from(out).toString('latin1')).toBe('www.example.com');
  });
  it('rejects padding longer than 7 bits, padding with a zero bit, and a decoded EOS', () => {
    // '0' is 00000 (5 bits); a trailing byte of all ones is 8 bits of padding.
    expect(huffmanDecode(Buffer.from([0x07, 0xff]))).toBe('bad-padding');
    // '0' followed by 3 padding bits that are not all ones.
    expect(huffmanDecode(Buffer.from([0x02]))).toBe('bad-padding');
    // EOS is 30 one-bits: four bytes of ones hold it.
    expect(huffmanDecode(Buffer.from([0xff, 0xff, 0xff, 0xff]))).toBe('eos-decoded');
    expect(huffmanDecode(Buffer.alloc(0))).toEqual(Uint8Array.from([]));
  });
});

describe('HPACK', () => {
  it('decodes what it encodes (literal fields without indexing), for any field octets', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc
            .tuple(fc.string({ maxLength: 200 }), fc.string({ maxLength: 300 }))
            .map(
              ([n, v]) =>
                [
                  Buffer.from(n, 'utf8').toString('latin1').toLowerCase(),
                  Buffer.from(v, 'utf8').toString('latin1'),
                ] as const,
            ),
          { maxLength: 10 },
        ),
        (fields) => {
          expect(new HpackDecoder().decode(encodeHeaders(fields))).toEqual(fields);
        },
      ),
    );
  });

  it('keeps the dynamic table across blocks and evicts by size', () => {
    const d = new HpackDecoder(64);
    // 0x40 literal with incremental indexing, new name "a" (1), value "b" (1): entry size 34.
    expect(d.decode(Buffer.from([0x40, 1, 0x61, 1, 0x62]))).toEqual([['a', 'b']]);
    // 0xbe = indexed 62: the newest dynamic entry.
    expect(d.decode(Buffer.from([0xbe]))).toEqual([['a', 'b']]);
    // A second entry (34) does not fit beside the first in 64 octets: the first is evicted.
    expect(d.decode(Buffer.from([0x40, 1, 0x63, 1, 0x64, 0xbe]))).toEqual([
      ['c', 'd'],
      ['c', 'd'],
    ]);
    expect(() => d.decode(Buffer.from([0xbf]))).toThrow(HpackError);
  });

  it('rejects malformed blocks with an HpackError', () => {
    const bad = [
      [0x80], // index 0
      [0xff, 0x80], // truncated integer
      [0xff, 0xff, 0xff, 0xff, 0xff, 0x7f], // integer too large
      [0x00, 0x05, 0x61], // string longer than the block
      [0x00, 0x81, 0xff], // Huffman string that is all padding (8 bits)
      [0x3f, 0xe2, 0x1f], // table size update to 4097, above the advertised 4096
      [0x82, 0x20], // table size update after a field
      [0xc0 | 62], // dynamic index with an empty table
    ];
    for (const block of bad) expect(() => new HpackDecoder().decode(Buffer.from(block))).toThrow(HpackError);
  });

  it('decodes nghttp2 header blocks: Huffman strings, indexed fields, every octet a header value may hold', async () => {
    // Values with every octet node:http2 lets through (tab, 0x20-0x7e, 0x80-0xff), which nghttp2 Huffman-codes
    // where that is shorter, and repeated fields it indexes and then refers back to.
    const octets = [
      9,
      ...Array.from({ length: 95 }, (_, i) => 0x20 + i),
      ...Array.from({ length: 128 }, (_, i) => 0x80 + i),
    ];
    const everything = Buffer.from(octets).toString('latin1');
    const socket = await h2Server((stream) =>
      ok(stream, Buffer.from('ok'), {
        'x-all': everything,
        'x-text': 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa0123456789',
        'x-repeat': 'same-value',
      }),
    );
    const fields: Array<readonly [string, string]> = [];
    const raw = await rawExchange(socket, (f) => fields.push(...f));
    expect(raw).toBe('ok');
    const get = (n: string) => fields.filter(([k]) => k === n).map(([, v]) => v);
    expect(get(':status')).toEqual(['200']);
    expect(get('x-all')).toEqual([everything]);
    expect(get('x-text')).toEqual(['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa0123456789']);
    expect(get('grpc-status')).toEqual(['0']);
  });
});

/**
 * One exchange over a raw socket using the client's own framing and HPACK pieces, collecting every decoded
 * header block: a second path to the decoder, independent of unaryCall's state machine.
 */
async function rawExchange(
  socket: string,
  onFields: (f: Array<readonly [string, string]>) => void,
): Promise<string> {
  const conn = connect(socket);
  const reader = new FrameReader();
  const hpack = new HpackDecoder();
  const body: Buffer[] = [];
  let block: Buffer[] = [];
  conn.write(
    Buffer.concat([
      Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'),
      encodeFrame(FrameType.SETTINGS, 0, 0, Buffer.alloc(0)),
      encodeFrame(
        FrameType.HEADERS,
        Flag.END_HEADERS,
        1,
        encodeHeaders([
          [':method', 'POST'],
          [':scheme', 'http'],
          [':path', '/x'],
          [':authority', 'localhost'],
        ]),
      ),
      encodeFrame(FrameType.DATA, Flag.END_STREAM, 1, Buffer.from('q')),
    ]),
  );
  return new Promise<string>((resolve, reject) => {
    conn.on('error', reject);
    conn.on('data', (chunk: Buffer) => {
      for (const f of reader.push(chunk)) {
        if (f.type === FrameType.SETTINGS && !(f.flags & Flag.ACK)) {
          conn.write(encodeFrame(FrameType.SETTINGS, Flag.ACK, 0, Buffer.alloc(0)));
        } else if (f.streamId === 1 && (f.type === FrameType.HEADERS || f.type === FrameType.CONTINUATION)) {
          block.push(Buffer.from(f.payload));
          if (f.flags & Flag.END_HEADERS) {
            onFields(hpack.decode(Buffer.concat(block)));
            block = [];
          }
          if (f.flags & Flag.END_STREAM) {
            conn.destroy();
            resolve(Buffer.concat(body).subarray(5).toString());
          }
        } else if (f.streamId === 1 && f.type === FrameType.DATA) {
          body.push(Buffer.from(f.payload));
        }
      }
    });
  });
}

describe.each(['pipe-handle', 'net'] as const)(
  'unaryCall over %s against node:http2 (nghttp2)',
  (transport) => {
    const call = (socket: string, request: Uint8Array = Buffer.from('hi'), timeoutMs = 2000) =>
      unaryCall({ socketPath: socket, method: '/test.Svc/Echo', request, timeoutMs, transport });

    it('makes a call and sends what a gRPC server expects', async () => {
      let seen: { body: Buffer; headers: Record<string, unknown> } | undefined;
      const socket = await h2Server((stream, body, headers) => {
        seen = { body, headers };
        ok(stream, Buffer.from('pong'));
      });
      const reply = await call(socket, Buffer.from('ping'), 1500);
      expect(Buffer.from(reply).toString()).toBe('pong');
      expect(seen?.body.equals(frame(Buffer.from('ping')))).toBe(true);
      expect(seen?.headers).toMatchObject({
        ':method': 'POST',
        ':path': '/test.Svc/Echo',
        'content-type': 'application/grpc',
        te: 'trailers',
        'grpc-timeout': '1500m',
      });
    });

    it('reads responses larger than a frame and than the default flow-control window', async () => {
      const big = Buffer.alloc(300_000, 7);
      const socket = await h2Server((stream) => ok(stream, big));
      expect(Buffer.from(await call(socket)).equals(big)).toBe(true);
    });

    it('reads padded frames and header blocks split into CONTINUATION frames', async () => {
      const socket = await h2Server(
        (stream) => ok(stream, Buffer.from('padded'), { 'x-large': 'v'.repeat(40_000) }),
        { paddingStrategy: h2.PADDING_STRATEGY_MAX, maxSendHeaderBlockLength: 100_000 },
      );
      expect(Buffer.from(await call(socket)).toString()).toBe('padded');
    });

    it('carries a trailers-only error status and its percent-encoded message', async () => {
      const socket = await h2Server((stream) =>
        stream.respond(
          {
            ':status': 200,
            'content-type': 'application/grpc',
            'grpc-status': String(GrpcStatus.RESOURCE_EXHAUSTED),
            'grpc-message': encodeURIComponent('no free IP address – try later'),
          },
          { endStream: true },
        ),
      );
      expect(await callError(call(socket))).toEqual({
        grpcStatus: GrpcStatus.RESOURCE_EXHAUSTED,
        message: 'no free IP address – try later',
      });
    });

    it('maps HTTP statuses the gRPC way', async () => {
      for (const [http, grpc] of [
        [404, GrpcStatus.UNIMPLEMENTED],
        [503, GrpcStatus.UNAVAILABLE],
        [418, GrpcStatus.UNKNOWN],
      ] as const) {
        const socket = await h2Server((stream) => stream.respond({ ':status': http }, { endStream: true }));
        expect((await callError(call(socket))).grpcStatus).toBe(grpc);
      }
    });

    it('fails with INTERNAL on a response without grpc-status or with a broken message frame', async () => {
      const noStatus = await h2Server((stream) => {
        stream.respond({ ':status': 200 }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'x-other': '1' }));
        stream.end(frame(Buffer.from('x')));
      });
      expect(await callError(call(noStatus))).toMatchObject({ grpcStatus: GrpcStatus.INTERNAL });
      const short = await h2Server((stream) => {
        stream.respond({ ':status': 200 }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        stream.end(Buffer.from([0, 0, 0, 0, 9, 1]));
      });
      expect(await callError(call(short))).toMatchObject({ grpcStatus: GrpcStatus.INTERNAL });
    });

    it('maps a reset stream: REFUSED_STREAM is UNAVAILABLE, CANCEL is CANCELLED', async () => {
      const refused = await h2Server((stream) => stream.close(h2.NGHTTP2_REFUSED_STREAM));
      expect((await callError(call(refused))).grpcStatus).toBe(GrpcStatus.UNAVAILABLE);
      const cancelled = await h2Server((stream) => stream.close(h2.NGHTTP2_CANCEL));
      expect((await callError(call(cancelled))).grpcStatus).toBe(GrpcStatus.CANCELLED);
    });

    it('is UNAVAILABLE when the server goes away before answering', async () => {
      const socket = await h2Server((stream) => stream.session?.destroy());
      expect((await callError(call(socket))).grpcStatus).toBe(GrpcStatus.UNAVAILABLE);
      // A listener that is not HTTP/2 at all and hangs up.
      const path = socketPath();
      const plain = createNetServer((c) => {
        sessions.add(c);
        c.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      });
      await new Promise<void>((r) => plain.listen(path, r));
      servers.push(plain);
      const e = await callError(call(path));
      expect([GrpcStatus.UNAVAILABLE, GrpcStatus.INTERNAL]).toContain(e.grpcStatus);
    });

    it('times out with DEADLINE_EXCEEDED when the server never answers', async () => {
      const socket = await h2Server(() => {
        // Never respond.
      });
      expect((await callError(call(socket, Buffer.from('x'), 150))).grpcStatus).toBe(
        GrpcStatus.DEADLINE_EXCEEDED,
      );
    });

    it('refuses a request it cannot send in one flow-control window, without connecting', async () => {
      const e = await callError(call(join(dir.path, 'nobody.sock'), Buffer.alloc(70_000)));
      expect(e.grpcStatus).toBe(GrpcStatus.INTERNAL);
      expect(e.message).toMatch(/exceeds/);
    });
  },
);
