import { spawn } from 'node:child_process';
import { inNetns } from '../src/exec.js';

/**
 * Starts a one-shot TCP listener inside a namespace that reports the address of the first peer to connect
 * (what the receiver sees: the pod address, or the node address after SNAT).
 */
export function tcpPeerProbe(netnsPath: string, host: string, port: number): { peer: Promise<string> } {
  const script = `const s=require('net').createServer(c=>{process.stdout.write(c.remoteAddress);c.end();s.close();});s.listen(${port},${JSON.stringify(host)},()=>process.stderr.write('ready'));setTimeout(()=>process.exit(2),15000).unref();`;
  const child = spawn('nsenter', [`--net=${netnsPath}`, process.execPath, '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const ready = new Promise<void>((resolve) => child.stderr.once('data', () => resolve()));
  const peer = new Promise<string>((resolve, reject) => {
    child.on('exit', (code) =>
      code === 0 ? resolve(out.replace(/^::ffff:/, '')) : reject(new Error(`probe exited ${code}`)),
    );
  });
  return { peer: ready.then(() => peer) };
}

/**
 * Connects from inside a namespace to host:port (and closes); false when refused or when nothing answers within
 * `timeoutMs` (a flow the VPC drops gets no answer at all).
 */
export async function tcpConnect(
  netnsPath: string,
  host: string,
  port: number,
  timeoutMs = 8000,
): Promise<boolean> {
  const script = `const c=require('net').connect(${port},${JSON.stringify(host)},()=>c.end());c.on('error',()=>process.exit(1));c.on('close',()=>process.exit(0));setTimeout(()=>process.exit(3),${timeoutMs}).unref();`;
  return (await inNetns(netnsPath, [process.execPath, '-e', script])).code === 0;
}
