// The plugin's unix-socket connection, over libuv's pipe handle and over node:net alike, against node:net
// servers: what is written arrives, what the server sends and its hang-up are reported, failures carry the
// errno name, and nothing is reported after close().
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  connectUnix,
  PIPE_HANDLE_NODE_MAJORS,
  pipeHandleAvailable,
  type UnixSocket,
  type UnixTransport,
} from '../src/rpc/unix-socket.js';

const dir = scratchDir('vck-unix-');
afterAll(() => dir.remove());

let servers: Server[] = [];
let peers: Socket[] = [];
afterEach(async () => {
  for (const p of peers) p.destroy();
  peers = [];
  await Promise.all(servers.map((s) => new Promise((r) => s.close(() => r(undefined)))));
  servers = [];
});

let paths = 0;
const socketPath = () => join(dir.path, `u${++paths}.sock`);

async function listen(onPeer: (peer: Socket) => void): Promise<string> {
  const path = socketPath();
  const server = createServer((peer) => {
    peers.push(peer);
    // Clients that hang up early are what several tests make happen.
    peer.on('error', () => {});
    onPeer(peer);
  });
  await new Promise<void>((r) => server.listen(path, r));
  servers.push(server);
  return path;
}

interface Recorded {
  socket: UnixSocket;
  events: string[];
  data: Buffer[];
  error: NodeJS.ErrnoException | undefined;
  /** Resolves at the first error or end. */
  done: Promise<void>;
}

function open(path: string, transport: UnixTransport): Recorded {
  let settle = () => {};
  const rec: Omit<Recorded, 'socket'> & { socket?: UnixSocket } = {
    events: [],
    data: [],
    error: undefined,
    done: new Promise<void>((r) => {
      settle = r;
    }),
  };
  rec.socket = connectUnix(
    path,
    {
      connect: () => rec.events.push('connect'),
      data: (chunk) => {
        rec.events.push('data');
        rec.data.push(Buffer.from(chunk));
      },
      error: (e) => {
        rec.events.push('error');
        rec.error = e;
        settle();
      },
      end: () => {
        rec.events.push('end');
        settle();
      },
    },
    transport,
  );
  return rec as Recorded;
}

it('drives the pipe handle on the Node majors it was tested on, and on no other', () => {
  const major = Number.parseInt(process.versions.node, 10);
  expect(pipeHandleAvailable()).toBe(PIPE_HANDLE_NODE_MAJORS.includes(major));
  // CI runs Node 20: the fast path is what the tests below exercise.
  expect(PIPE_HANDLE_NODE_MAJORS).toContain(20);
});

describe.each(['pipe-handle', 'net'] as const)('connectUnix over %s', (transport) => {
  it('sends what was written before the connection was up, and reports the reply and the hang-up', async () => {
    const path = await listen((peer) => {
      const got: Buffer[] = [];
      peer.on('data', (c: Buffer) => {
        got.push(c);
        if (Buffer.concat(got).length === 6) peer.end(Buffer.concat([Buffer.from('re:'), ...got]));
      });
    });
    const c = open(path, transport);
    c.socket.write(Buffer.from('abc'));
    c.socket.write(Buffer.from('def'));
    await c.done;
    expect(Buffer.concat(c.data).toString()).toBe('re:abcdef');
    expect(c.events[0]).toBe('connect');
    expect(c.events.at(-1)).toBe('end');
    expect(c.error).toBeUndefined();
  });

  it('carries a reply larger than one read', async () => {
    const big = Buffer.alloc(1_000_000, 0x5a);
    const path = await listen((peer) => peer.end(big));
    const c = open(path, transport);
    await c.done;
    expect(Buffer.concat(c.data).equals(big)).toBe(true);
  });

  it('fails with ENOENT and the path when nothing is there', async () => {
    const path = join(dir.path, 'nobody.sock');
    const c = open(path, transport);
    await c.done;
    expect(c.events).toEqual(['error']);
    expect(c.error).toMatchObject({ code: 'ENOENT', syscall: 'connect' });
    expect(c.error?.message).toContain(path);
  });

  it('fails with ECONNREFUSED on a socket file nobody listens on (a killed daemon leaves one)', async () => {
    const stale = socketPath();
    // A clean close unlinks the socket file; SIGKILL does not.
    const child = spawn(process.execPath, [
      '-e',
      `require('node:net').createServer().listen(${JSON.stringify(stale)}, () => process.kill(process.pid, 'SIGKILL'))`,
    ]);
    await new Promise((r) => child.on('exit', r));
    expect(existsSync(stale)).toBe(true);
    const c = open(stale, transport);
    await c.done;
    expect(c.error).toMatchObject({ code: 'ECONNREFUSED', syscall: 'connect' });
  });

  it('reports nothing after close(), even with the connection and a reply in flight', async () => {
    const path = await listen((peer) => peer.end('late'));
    const c = open(path, transport);
    c.socket.write(Buffer.from('x'));
    c.socket.close();
    c.socket.close();
    c.socket.write(Buffer.from('ignored'));
    await new Promise((r) => setTimeout(r, 100));
    expect(c.events).toEqual([]);
  });

  it('closes from inside its own data event without further events', async () => {
    const path = await listen((peer) => {
      peer.write('one');
      setTimeout(() => peer.end('two'), 20);
    });
    const c = open(path, transport);
    const seen: string[] = [];
    const closing = connectUnix(
      path,
      {
        connect: () => seen.push('connect'),
        data: () => {
          seen.push('data');
          closing.close();
        },
        error: () => seen.push('error'),
        end: () => seen.push('end'),
      },
      transport,
    );
    await c.done;
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toEqual(['connect', 'data']);
  });
});
