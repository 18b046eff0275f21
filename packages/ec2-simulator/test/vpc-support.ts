import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { get } from 'node:http';
import { promisify } from 'node:util';
import { EC2Client } from '@aws-sdk/client-ec2';
import type { VirtualVpc } from '../src/vpc/index.js';

export const VPC_ID = 'vpc-0a000000000000001';
export const SUBNET_A = 'subnet-0a000000000000001';
export const SUBNET_CGNAT = 'subnet-0b000000000000002';
export const NODE_A = 'i-0a000000000000001';
export const NODE_B = 'i-0b000000000000002';

/** Two nodes in 10.0.0.0/24, a second VPC CIDR 100.64.0.0/16 with its own subnet. */
export const twoNodes = {
  region: 'us-west-2',
  vpcs: [{ id: VPC_ID, cidrBlocks: ['10.0.0.0/16', '100.64.0.0/16'] }],
  subnets: [
    { id: SUBNET_A, cidrBlock: '10.0.0.0/24', availabilityZone: 'us-west-2a' },
    { id: SUBNET_CGNAT, cidrBlock: '100.64.0.0/24', availabilityZone: 'us-west-2a' },
  ],
  instances: [
    { id: NODE_A, instanceType: 'm5.large', subnetId: SUBNET_A, privateIpAddress: '10.0.0.10' },
    { id: NODE_B, instanceType: 'm5.large', subnetId: SUBNET_A, privateIpAddress: '10.0.0.20' },
  ],
};

/** The real AWS SDK against the simulator's loopback endpoint. */
export function sdk(vpc: VirtualVpc): EC2Client {
  return new EC2Client({
    endpoint: vpc.simulator.endpoint,
    region: vpc.simulator.region,
    credentials: { accessKeyId: 'AKIDSIMULATOR', secretAccessKey: 'simulator-secret' },
    maxAttempts: 1,
  });
}

/** Runs a command inside a namespace file; returns stdout (throws on failure). */
export function inNs(netnsPath: string, cmd: string[]): string {
  return execFileSync('nsenter', [`--net=${netnsPath}`, ...cmd], { encoding: 'utf8', timeout: 20_000 });
}

/**
 * Same as {@link inNs} without blocking the event loop: needed whenever the command talks to a listener
 * of this process (IMDS, the EC2 endpoint).
 */
export async function inNsAsync(netnsPath: string, cmd: string[]): Promise<string> {
  const r = await promisify(execFile)('nsenter', [`--net=${netnsPath}`, ...cmd], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  return r.stdout;
}

/**
 * IMDSv2 from inside an instance, as a node asks it (curl in the namespace): a token, then `get(path)` of
 * `meta-data/<path>`.
 */
export async function imdsIn(
  netnsPath: string,
  imdsEndpoint: string,
): Promise<{ get: (path: string) => Promise<string> }> {
  const token = await inNsAsync(netnsPath, [
    'curl',
    '-sf',
    '-X',
    'PUT',
    '-H',
    'x-aws-ec2-metadata-token-ttl-seconds: 60',
    `${imdsEndpoint}/latest/api/token`,
  ]);
  return {
    get: (path) =>
      inNsAsync(netnsPath, [
        'curl',
        '-sf',
        '-H',
        `x-aws-ec2-metadata-token: ${token.trim()}`,
        `${imdsEndpoint}/latest/meta-data/${path}`,
      ]),
  };
}

/** GET a JSON document over a fresh connection (no keep-alive left behind). */
export function getJson(url: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false, headers: { connection: 'close' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
      });
    });
    req.on('error', reject);
  });
}

/** True when one ping (optionally from `source`) gets an answer within a second. */
export function pings(netnsPath: string, dst: string, source?: string): boolean {
  const r = spawnSync(
    'nsenter',
    [`--net=${netnsPath}`, 'ping', '-n', '-q', '-c', '1', '-W', '1', ...(source ? ['-I', source] : []), dst],
    { encoding: 'utf8', timeout: 10_000 },
  );
  return r.status === 0;
}

/** `ip -j link show` inside a namespace. */
export function links(netnsPath: string): { ifname: string; address: string; operstate: string }[] {
  return JSON.parse(inNs(netnsPath, ['ip', '-j', 'link', 'show']));
}

/** Names of the namespaces under /run/netns. */
export function netnsNames(): string[] {
  try {
    return readdirSync('/run/netns');
  } catch {
    return [];
  }
}

/** Root-namespace link names (must never change). */
export function rootLinks(): string[] {
  return (
    JSON.parse(execFileSync('ip', ['-j', 'link', 'show'], { encoding: 'utf8' })) as { ifname: string }[]
  )
    .map((l) => l.ifname)
    .sort();
}

/** Socket fds of this process. */
export function socketCount(): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith('socket:')) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

/** Mount points mentioning a string. */
export function mountsWith(text: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((l) => l.includes(text));
}

/** Child processes of this process. */
export function children(): number[] {
  const out: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid) out.push(Number(p));
    } catch {
      // gone
    }
  }
  return out;
}
