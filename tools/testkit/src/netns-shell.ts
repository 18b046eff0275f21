import { execFileSync, spawn } from 'node:child_process';

/** Runs a command and returns its stdout; throws on failure. */
export function run(file: string, ...args: string[]): string {
  return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs a command inside the named network namespace (via nsenter, never touching the root namespace). */
export function inNs(ns: string, file: string, ...args: string[]): string {
  return run('nsenter', `--net=/var/run/netns/${ns}`, '--', file, ...args);
}

/** Creates namespaces and returns a cleanup that deletes exactly those. */
export function createNamespaces(names: string[]): () => void {
  const made: string[] = [];
  try {
    for (const name of names) {
      run('ip', 'netns', 'add', name);
      made.push(name);
      inNs(name, 'ip', 'link', 'set', 'lo', 'up');
    }
  } catch (error) {
    for (const name of made) run('ip', 'netns', 'del', name);
    throw error;
  }
  return () => {
    for (const name of made) {
      try {
        run('ip', 'netns', 'del', name);
      } catch {
        // already gone
      }
    }
  };
}

const SERVER = `
const net = require('node:net');
const server = net.createServer((socket) => { socket.end(socket.remoteAddress + '\\n'); });
server.listen(Number(process.argv[1]), process.argv[2], () => process.stdout.write('ready\\n'));
`;

/**
 * Starts a TCP listener in `ns` that answers each connection with the peer address it saw, on `host`
 * (`'::'` for IPv6).
 */
export async function startPeerReporter(ns: string, port: number, host = '0.0.0.0'): Promise<() => void> {
  const child = spawn(
    'nsenter',
    [`--net=/var/run/netns/${ns}`, '--', process.execPath, '-e', SERVER, String(port), host],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', () => resolve());
  });
  return () => child.kill('SIGTERM');
}

const CLIENT = `
const net = require('node:net');
const socket = net.connect({ host: process.argv[1], port: Number(process.argv[2]), timeout: 3000 });
let data = '';
socket.on('data', (d) => { data += d; });
socket.on('end', () => { process.stdout.write(data); });
socket.on('timeout', () => { process.stderr.write('timeout'); process.exit(2); });
socket.on('error', (e) => { process.stderr.write(String(e)); process.exit(3); });
`;

/** Connects from `ns` to host:port and returns what the reporter said (the source address it saw). */
export function askPeer(ns: string, host: string, port: number): string {
  return inNs(ns, process.execPath, '-e', CLIENT, host, String(port)).trim();
}
