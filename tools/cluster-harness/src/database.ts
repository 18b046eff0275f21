/**
 * A "database" in the cluster's VPC: an instance that is not a node (no aws-node), with its own security group,
 * and a TCP listener inside its namespace that records the address of every peer that got through. What security
 * groups for pods are for: the database's group admits the pods' group only, so a pod with a branch ENI in that
 * group connects and an ordinary pod on the same node does not.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { DescribedInstance } from '@vpc-cni-kit/ec2-simulator';
import { inNetns } from './exec.js';

/** Options of `ClusterOptions.database`. */
export interface DatabaseOptions {
  /** Its security group (`sg-…`), declared in the cluster's `network.securityGroups`. */
  readonly securityGroupId: string;
  /** TCP port it listens on (default 5432). */
  readonly port?: number;
  /** Instance type (default m5.large). */
  readonly instanceType?: string;
}

/** The database of a running cluster. */
export interface ClusterDatabase {
  /** Its instance (namespace, primary address). */
  readonly instance: DescribedInstance;
  /** Its primary ENI. */
  readonly eniId: string;
  /** Its address. */
  readonly address: string;
  /** Its TCP port. */
  readonly port: number;
  /** The peers that connected so far (what the database saw: pod addresses, unless SNATed), oldest first. */
  peers(): readonly string[];
  /** Stops the listener (by its pid). */
  stop(): Promise<void>;
}

/**
 * Starts the listener of `instance` on `port` (a process of this machine's Node inside the instance's namespace)
 * and resolves once it listens. Each connection is answered with one line, `hello <peer>`, and closed.
 */
export async function startDatabase(
  instance: DescribedInstance,
  eniId: string,
  port: number,
): Promise<ClusterDatabase> {
  const script = `const s=require('net').createServer(c=>{const p=String(c.remoteAddress).replace(/^::ffff:/,'');process.stdout.write(p+'\\n');c.end('hello '+p+'\\n');});s.listen(${port},'0.0.0.0',()=>process.stderr.write('ready\\n'));process.on('SIGTERM',()=>process.exit(0));`;
  const child: ChildProcess = spawn(
    'nsenter',
    [`--net=${instance.netnsPath}`, process.execPath, '-e', script],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const peers: string[] = [];
  child.stdout?.setEncoding('utf8').on('data', (s: string) => {
    for (const line of s.split('\n')) if (line !== '') peers.push(line);
  });
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr?.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
      if (stderr.includes('ready')) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`the database listener exited (${code}): ${stderr.trim()}`)),
    );
  });
  return {
    instance,
    eniId,
    address: instance.privateIp,
    port,
    peers: () => [...peers],
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Connects from inside a namespace (a pod's) to the database at `host:port`: true when its greeting came back,
 * false when the connection was refused, reset or not answered within `ms` (a security group drops silently).
 */
export async function databaseHello(
  netnsPath: string,
  host: string,
  port: number,
  ms = 1500,
): Promise<boolean> {
  const script = `const c=require('net').connect(${port},${JSON.stringify(host)});let d='';c.on('data',b=>d+=b);c.on('end',()=>process.exit(d.startsWith('hello')?0:4));c.on('error',()=>process.exit(1));setTimeout(()=>process.exit(3),${ms}).unref();`;
  return (await inNetns(netnsPath, [process.execPath, '-e', script])).code === 0;
}
