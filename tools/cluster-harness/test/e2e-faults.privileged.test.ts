/**
 * Fault scenarios of aws-node on the virtual VPC (issue #21), each on its own one-node cluster: IMDS lagging
 * EC2 across a SIGKILL, an ADD naming the node's own network namespace, a lost AttachNetworkInterface reply,
 * a start whose metrics port is taken, a corrupt checkpoint, a gRPC socket or CNI configuration directory that
 * cannot be used (all refused before the node is changed), calls made while the daemon restores (answered
 * UNAVAILABLE, ADR 0035), and an init run over a FIFO and a symbolic link left at its old temp paths.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { daemonClient, GrpcStatus, isGrpcCallError } from '@vpc-cni-kit/aws-node';
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterEach, expect, it } from 'vitest';
import { awsNodeBinDir } from '../src/bin-dir.js';
import {
  type Cluster,
  type ClusterNode,
  type ClusterOptions,
  type ClusterPod,
  PodError,
} from '../src/cluster.js';
import { inNetns } from '../src/exec.js';
import { processLauncher } from '../src/launcher.js';
import { enis, eventually, intruderAddRequest, startOneNode } from './support/scenario.js';

/** What a starting aws-node answers every call with (examples/aws-node/src/daemon/early-rpc.ts). */
const STARTING =
  "aws-node is starting: it serves once the node's addresses are restored; the runtime retries";

describePrivileged('aws-node under faults', () => {
  let cluster: Cluster | undefined;
  const start = async (options: Partial<ClusterOptions> = {}) => {
    cluster = await startOneNode(options);
    return cluster;
  };
  const checkpointed = (c: Cluster) =>
    (
      JSON.parse(readFileSync(c.nodes[0]!.checkpoint, 'utf8')) as { allocations: { ipv4: string }[] }
    ).allocations
      .map((a) => a.ipv4)
      .sort();

  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  }, 120_000);

  /** The node's SNAT rules and primary ENI MTU, and a way to undo what a start did to them, so any change shows. */
  const nodeState = (c: Cluster) => {
    const ns = c.nodes[0]!.instance.netnsPath;
    const sh = async (args: string[]) => {
      const r = await inNetns(ns, args);
      if (r.code !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    return {
      snat: async () => /AWS-SNAT-CHAIN-0/.test(await sh(['iptables-save', '-t', 'nat'])),
      mtu: async () => Number(/ mtu (\d+) /.exec(await sh(['ip', 'link', 'show', 'eth0']))?.[1]),
      undo: async () => {
        await sh(['iptables', '-t', 'nat', '-F']);
        await sh(['iptables', '-t', 'nat', '-X']);
        await sh(['ip', 'link', 'set', 'eth0', 'mtu', '1400']);
      },
    };
  };
  /** The one line a failed start wrote to stderr (from the harness's "exited (1): <stderr>" error). */
  const stderrLines = (failed: string) =>
    (/exited \(1\): ([\s\S]*?)\n\n/.exec(failed)?.[1] ?? '').trim().split('\n');

  it('IMDS lags EC2 across a SIGKILL: the live pod keeps its address and no other pod gets it', async () => {
    const c = await start({ env: { WARM_ENI_TARGET: '0', WARM_IP_TARGET: '1' } });
    // From now on IMDS shows new addresses ten minutes after EC2 assigned them.
    c.vpc.simulator.faults.add({ kind: 'imds-delay', ms: 600_000 });
    const a = await c.addPod(0);
    // The pod took the warm address; the pool tops up with one IMDS does not show yet.
    await eventually('the pool to top up', async () => (await enis(c)).TotalIPs >= 2);
    const b = await c.addPod(0);
    await c.stopDaemon(0, 'SIGKILL');
    await c.startDaemon(0);
    expect(checkpointed(c)).toEqual([a.address, b.address].sort());
    expect((await enis(c)).AssignedIPs).toBe(2);
    expect(readFileSync(c.nodes[0]!.logFile, 'utf8')).not.toContain('checkpoint entry dropped');
    const more: ClusterPod[] = [];
    for (let i = 0; i < 3; i++) more.push(await c.addPod(0, { retryForMs: 30_000 }));
    const all = [a, b, ...more].map((p) => p.address);
    expect(new Set(all).size).toBe(all.length);
  }, 180_000);

  it("an ADD naming the node's own network namespace is refused and touches nothing", async () => {
    const c = await start();
    const node = c.nodes[0]!;
    const routes = async () => (await inNetns(node.instance.netnsPath, ['ip', 'route', 'show'])).stdout;
    const links = async () => (await inNetns(node.instance.netnsPath, ['ip', '-o', 'link', 'show'])).stdout;
    const before = { routes: await routes(), links: await links(), assigned: (await enis(c)).AssignedIPs };
    const client = daemonClient(node.socket, 5000);
    // By the namespace file the node's network is mounted at, and by the daemon's own /proc entry.
    for (const netns of [node.instance.netnsPath, `/proc/${node.daemon!.pid}/ns/net`]) {
      const reply = await client.addNetwork(intruderAddRequest(netns));
      expect(reply).toMatchObject({ Success: false, FailureCode: 'InvalidRequest' });
      expect(reply.FailureMessage).toContain("node's own network namespace");
    }
    expect(await routes()).toBe(before.routes);
    expect(await links()).toBe(before.links);
    expect((await enis(c)).AssignedIPs).toBe(before.assigned);
    expect(checkpointed(c)).toEqual([]);
  }, 120_000);

  it('a lost AttachNetworkInterface reply: the ENI is adopted, the waiting pod is served in seconds', async () => {
    const c = await start({ env: { WARM_ENI_TARGET: '0', WARM_IP_TARGET: '1' } });
    c.vpc.simulator.faults.failNext('AttachNetworkInterface', 'InternalError', { afterApply: true });
    const pods: ClusterPod[] = [];
    // m5.large: 9 pod addresses on the primary ENI; the tenth pod needs a new ENI.
    for (let i = 0; i < 10; i++) pods.push(await c.addPod(0, { retryForMs: 30_000 }));
    expect(new Set(pods.map((p) => p.address)).size).toBe(10);
    const calls = c.vpc.simulator.calls;
    expect(calls.filter((call) => call.action === 'AttachNetworkInterface')).toHaveLength(1);
    expect(calls.filter((call) => call.action === 'DeleteNetworkInterface')).toEqual([]);
    expect(Object.keys((await enis(c)).ENIs)).toHaveLength(2);
  }, 180_000);

  it('a start whose port is taken exits 1 with one line and leaves nothing serving', async () => {
    const c = await start();
    const node = c.nodes[0]!;
    await c.stopDaemon(0, 'SIGTERM');
    const saved = { ...node.env };
    try {
      // The metrics endpoint asks for the introspection's port: it cannot listen (found before the node changes).
      node.env = { ...saved, AWS_NODE_METRICS_BIND_ADDRESS: '127.0.0.1:61679' };
      const failed = await c.startDaemon(0, 20_000).catch((e: unknown) => e);
      expect(String(failed)).toMatch(/exited \(1\)/);
      expect(String(failed)).toMatch(
        /aws-node: failed to start: cannot listen on 127\.0\.0\.1:61679: EADDRINUSE/,
      );
      await expect(daemonClient(node.socket, 1000).health()).rejects.toThrow();
      // Invalid settings stop it before anything is touched.
      node.env = { ...saved, AWS_NODE_METRICS_BIND_ADDRESS: ':99999' };
      const invalid = await c.startDaemon(0, 20_000).catch((e: unknown) => e);
      expect(String(invalid)).toMatch(/exited \(1\)/);
      expect(String(invalid)).toContain('AWS_NODE_METRICS_BIND_ADDRESS');
    } finally {
      node.env = saved;
    }
    // Fixed, it starts.
    await c.startDaemon(0);
  }, 120_000);

  it('a corrupt checkpoint stops the start with one line naming it, and the node is not changed', async () => {
    const c = await start();
    const node = c.nodes[0]!;
    await c.stopDaemon(0, 'SIGTERM');
    const { snat, mtu, undo } = nodeState(c);
    expect(await snat()).toBe(true);
    // Undo what the first start did to the node (its SNAT rules, the primary ENI's MTU), so any change shows.
    await undo();
    const good = readFileSync(node.checkpoint, 'utf8');
    writeFileSync(node.checkpoint, '{"version":"vpc-cni-ipam/1","allocations":[{"networkName"');
    const started = Date.now();
    const failed = String(await c.startDaemon(0, 20_000).catch((e: unknown) => e));
    expect(failed).toMatch(/exited \(1\)/);
    const path = node.checkpoint.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(stderrLines(failed)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^aws-node: failed to start: checkpoint ${path} cannot be restored \\(checkpoint is not valid JSON: .+\\): ` +
            'nothing on the node was changed; move the file aside .* keep their addresses only if it is restored$',
        ),
      ),
    ]);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await snat()).toBe(false);
    expect(await mtu()).toBe(1400);
    // The checkpoint back, it starts and sets the node up again.
    renameSync(`${node.checkpoint}`, `${node.checkpoint}.corrupt`);
    writeFileSync(node.checkpoint, good);
    await c.startDaemon(0);
    expect(await snat()).toBe(true);
    expect(await mtu()).toBe(9001);
  }, 120_000);
  it('while it restores, every call answers UNAVAILABLE: ADD is code 11 in one line, DEL tears down, then it serves', async () => {
    const c = await start();
    const node = c.nodes[0]!;
    const pod = await c.addPod(0);
    await c.stopDaemon(0, 'SIGTERM');
    // The restore asks EC2 for the node's ENIs: four seconds per call from now on.
    c.vpc.simulator.faults.add({ kind: 'latency', ms: 4000, action: 'DescribeNetworkInterfaces' });
    const ready = c.startDaemon(0);
    ready.catch(() => undefined); // awaited below
    const client = daemonClient(node.socket, 2000);
    const unavailable = (e: unknown) =>
      isGrpcCallError(e) && e.connected ? [e.grpcStatus, e.message] : ['not answered', String(e)];
    // The socket answers (UNAVAILABLE, saying why) long before the restore is done.
    let health: unknown;
    await eventually(
      'the socket to answer',
      async () => {
        health = await client.health().catch((e: unknown) => e);
        return isGrpcCallError(health) && health.connected;
      },
      20_000,
      20,
    );
    expect(unavailable(health)).toEqual([GrpcStatus.UNAVAILABLE, STARTING]);
    expect(
      unavailable(await client.addNetwork(intruderAddRequest('/proc/1/ns/net')).catch((e) => e)),
    ).toEqual([GrpcStatus.UNAVAILABLE, STARTING]);
    // Through the plugin, as the runtime calls it: "try again later" (the runtime retries), one line with the reason.
    const failed = await c.addPod(0, { retryForMs: 0 }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(PodError);
    expect(failed).toMatchObject({
      cniCode: 11,
      message: `add: ${STARTING}`,
      details: `UNAVAILABLE from ${node.socket}`,
    });
    // DEL as with a daemon that is down: the host side goes from the prevResult and DEL succeeds.
    await c.delPod(pod);
    expect(readFileSync(join(node.dir, 'plugin.log'), 'utf8')).toContain('tearing down from prevResult');
    // All of that happened while it was starting.
    expect(unavailable(await client.health().catch((e) => e))).toEqual([GrpcStatus.UNAVAILABLE, STARTING]);
    c.vpc.simulator.faults.clear();
    await ready;
    expect(await client.health()).toBe(1);
    const served = await c.addPod(0);
    expect(served.address).toMatch(/^10\.0\./);
  }, 180_000);

  it('a gRPC socket or CNI configuration directory that cannot be used stops the start in one line; the node is not changed', async () => {
    // With `readOnly` set, the daemon runs in a mount namespace of its own with a read-only tmpfs over that directory.
    let readOnly: string | undefined;
    const processes = processLauncher(awsNodeBinDir());
    const c = await start({
      launcher: {
        name: 'processes',
        init: (n) => processes.init(n),
        daemon: (n: ClusterNode) =>
          readOnly === undefined
            ? processes.daemon(n)
            : spawn(
                'unshare',
                [
                  '--mount',
                  '--propagation',
                  'private',
                  '--',
                  'sh',
                  '-c',
                  'mount -t tmpfs -o ro,size=16k vck-ro "$1" && exec nsenter --net="$2" "$3" "$4"',
                  'sh',
                  readOnly,
                  n.instance.netnsPath,
                  process.execPath,
                  join(awsNodeBinDir(), 'aws-node.cjs'),
                ],
                { env: n.env, stdio: ['ignore', 'ignore', 'pipe'] },
              ),
      },
    });
    const node = c.nodes[0]!;
    await c.stopDaemon(0, 'SIGTERM');
    const { snat, mtu, undo } = nodeState(c);
    await undo();
    const saved = { ...node.env };
    const refused = async (env: Record<string, string>) => {
      node.env = { ...saved, ...env };
      try {
        const started = Date.now();
        const failed = String(await c.startDaemon(0, 20_000).catch((e: unknown) => e));
        expect(failed).toMatch(/exited \(1\)/);
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(await snat()).toBe(false);
        expect(await mtu()).toBe(1400);
        return stderrLines(failed);
      } finally {
        node.env = saved;
      }
    };
    // A server listening on the socket (another aws-node, say): refused, and its socket left to it.
    const accepted = new Set<Socket>();
    const live = createServer((s) => {
      accepted.add(s.on('error', () => undefined));
      s.end('mine\n');
    });
    await new Promise<void>((r) => live.listen(node.socket, r));
    try {
      expect(await refused({})).toEqual([
        `aws-node: failed to start: cannot serve on ${node.socket}: a server is listening on it (another aws-node?); stop that one or set AWS_NODE_IPAMD_SOCKET to another path`,
      ]);
      const answer = await new Promise<string>((resolve, reject) => {
        let got = '';
        const client = connect(node.socket);
        client
          .on('data', (b: Buffer) => {
            got += b.toString();
          })
          .on('end', () => {
            client.destroy();
            resolve(got);
          })
          .on('error', reject);
      });
      expect(answer).toBe('mine\n');
    } finally {
      for (const s of accepted) s.destroy();
      await new Promise((r) => live.close(r));
    }
    // A directory in the socket's place.
    const directory = join(node.dir, 'ipamd.sock.d');
    mkdirSync(directory);
    expect(await refused({ AWS_NODE_IPAMD_SOCKET: directory })).toEqual([
      `aws-node: failed to start: cannot serve on ${directory}: it exists and is not a socket (a directory); remove it or set AWS_NODE_IPAMD_SOCKET to another path`,
    ]);
    rmSync(directory, { recursive: true });
    // A read-only file system: nothing is in the way, the bind itself fails (ADR 0034 could not see this one).
    readOnly = join(node.dir, 'read-only');
    mkdirSync(readOnly);
    try {
      const socket = join(readOnly, 'ipamd.sock');
      expect(await refused({ AWS_NODE_IPAMD_SOCKET: socket })).toEqual([
        `aws-node: failed to start: cannot serve on ${socket}: EROFS, the file system is read-only; nothing on the node was changed; set AWS_NODE_IPAMD_SOCKET to another path`,
      ]);
    } finally {
      readOnly = undefined;
    }
    // A CNI configuration directory that cannot be made (it was made last, after the node was changed).
    expect(await refused({ HOST_CNI_CONFDIR_PATH: '/proc/vck-no-such-dir/net.d' })).toEqual([
      'aws-node: failed to start: the CNI configuration directory cannot take the conflist: cannot create the directory /proc/vck-no-such-dir (ENOENT); nothing on the node was changed; set HOST_CNI_CONFDIR_PATH to a writable directory',
    ]);
    expect(existsSync(node.socket)).toBe(false);
    // Fixed, it starts and sets the node up.
    await c.startDaemon(0);
    expect(await snat()).toBe(true);
    expect(await mtu()).toBe(9001);
  }, 180_000);

  it('aws-vpc-cni-init: a FIFO or a symbolic link at the old temp path <bin>/<plugin>.tmp neither holds nor misdirects it', async () => {
    const c = await start();
    const node = c.nodes[0]!;
    const bin = node.cniBinDir;
    // What the init wrote through before: a fixed <dst>.tmp, opened for writing (a FIFO there waited for a
    // reader for ever; a symbolic link was written through, then renamed into the plugin's place).
    execFileSync('mkfifo', [join(bin, 'aws-cni.tmp')]);
    const elsewhere = join(node.dir, 'not-a-plugin');
    writeFileSync(elsewhere, 'untouched\n');
    symlinkSync(elsewhere, join(bin, 'portmap.tmp'));
    // Nobody ever reads the FIFO: an init that opens it is held until the 20 s deadline kills it.
    const started = performance.now();
    const r = await inNetns(
      node.instance.netnsPath,
      [process.execPath, join(awsNodeBinDir(), 'aws-vpc-cni-init.cjs')],
      {
        env: node.env,
        timeoutMs: 20_000,
      },
    );
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(readFileSync(elsewhere, 'utf8')).toBe('untouched\n');
    for (const plugin of ['aws-cni', 'portmap']) {
      expect(lstatSync(join(bin, plugin)).isFile(), plugin).toBe(true);
      expect(statSync(join(bin, plugin)).mode & 0o777, plugin).toBe(0o755);
    }
    // No temp file of its own left behind; the two strangers it did not open are still there.
    expect(
      readdirSync(bin)
        .filter((f) => f.includes('.tmp'))
        .sort(),
    ).toEqual(['aws-cni.tmp', 'portmap.tmp']);
    // The daemon installed by the first init still serves pods with the reinstalled plugin.
    await c.addPod(0);
  }, 180_000);
});
