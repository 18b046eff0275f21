/**
 * containerd (Debian's, with runc) started for a test or the demo on its own root, state and socket, and a
 * {@link NodeLauncher} running the aws-node image's init container and daemon container the way the
 * DaemonSet does: in the node's network namespace (the host network of the instance), with the DaemonSet's
 * host paths mounted (here the node's directories, at the same paths, so the environment stays valid).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ClusterNode } from './cluster.js';
import type { Ran } from './exec.js';
import type { NodeLauncher } from './launcher.js';

/** A running containerd. */
export interface Containerd {
  /** Its gRPC socket. */
  readonly socket: string;
  /** The containerd namespace everything here uses. */
  readonly namespace: string;
  /** Runs `ctr` against it. */
  ctr(args: readonly string[], timeoutMs?: number): Promise<Ran>;
  /** Spawns a long-running `ctr` (e.g. `run` in the foreground). */
  spawnCtr(args: readonly string[]): ChildProcess;
  /** Imports a docker-archive or OCI archive; resolves to the image names it holds. */
  importImage(archive: string): Promise<string[]>;
  /** Stops containerd (by its pid) and waits for it to exit. Containers must be gone first. */
  stop(): Promise<void>;
}

/**
 * Starts containerd with everything under `dir` (root, state, sockets), the CRI plugin off and the `native`
 * snapshotter (works on any file system). Resolves once its socket answers.
 */
export async function startContainerd(dir: string, namespace = 'vck'): Promise<Containerd> {
  mkdirSync(dir, { recursive: true });
  const socket = join(dir, 'containerd.sock');
  const config = join(dir, 'config.toml');
  writeFileSync(
    config,
    [
      'version = 2',
      `root = ${JSON.stringify(join(dir, 'root'))}`,
      `state = ${JSON.stringify(join(dir, 'state'))}`,
      'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
      '[grpc]',
      `  address = ${JSON.stringify(socket)}`,
      '[ttrpc]',
      `  address = ${JSON.stringify(`${socket}.ttrpc`)}`,
      '[debug]',
      `  address = ${JSON.stringify(join(dir, 'debug.sock'))}`,
      '',
    ].join('\n'),
  );
  const daemon = spawn('containerd', ['--config', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  daemon.stderr?.on('data', (c: Buffer) => {
    log = (log + c.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => daemon.once('exit', () => resolve()));
  const ctr = (args: readonly string[], timeoutMs = 120_000): Promise<Ran> =>
    new Promise((resolve) =>
      execFile(
        'ctr',
        ['--address', socket, '--namespace', namespace, ...args],
        { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) =>
          resolve({
            code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
            stdout,
            stderr,
          }),
      ),
    );
  const deadline = Date.now() + 15_000;
  while ((await ctr(['version'], 5000)).code !== 0) {
    if (daemon.exitCode !== null || Date.now() > deadline) {
      daemon.kill('SIGKILL');
      throw new Error(`containerd did not start: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    socket,
    namespace,
    ctr,
    spawnCtr: (args) =>
      spawn('ctr', ['--address', socket, '--namespace', namespace, ...args], {
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    async importImage(archive) {
      const r = await ctr(['images', 'import', '--snapshotter', 'native', archive], 600_000);
      if (r.code !== 0) throw new Error(`ctr images import failed: ${r.stderr}`);
      return [...r.stdout.matchAll(/^unpacking (\S+) /gm)].map((m) => m[1] as string);
    },
    async stop() {
      if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGTERM');
      await exited;
    },
  };
}

/** Mount options of a bind mount at the same path inside the container. */
function bind(path: string, propagation = 'rprivate'): string {
  return `type=bind,src=${path},dst=${path},options=rbind:rw:${propagation}`;
}

/**
 * Runs each node's init step and daemon as containers of `image` under `containerd`: the init container
 * and the daemon container privileged (as in the DaemonSet: the daemon plumbs pods); both in the node's
 * instance namespace, with the node's directories and the runtime's network namespaces (/var/run/netns,
 * propagated from the host) mounted.
 */
export function containerdLauncher(containerd: Containerd, image: string): NodeLauncher {
  let seq = 0;
  const names = new Map<number, string[]>();
  const containerName = (node: ClusterNode, what: string) => {
    const name = `aws-node-${process.pid}-${node.index}-${what}-${seq++}`;
    names.set(node.index, [...(names.get(node.index) ?? []), name]);
    return name;
  };
  const common = (node: ClusterNode): string[] => {
    const dirs = new Set([node.dir, dirname(node.socket), '/var/run/netns']);
    for (const d of dirs) mkdirSync(d, { recursive: true });
    return [
      '--snapshotter',
      'native',
      '--with-ns',
      `network:${node.instance.netnsPath}`,
      ...[...dirs].flatMap((d) => ['--mount', bind(d, d === '/var/run/netns' ? 'rslave' : 'rprivate')]),
      ...(existsSync('/run/xtables.lock') ? ['--mount', bind('/run/xtables.lock')] : []),
      ...Object.entries(node.env)
        .filter(([k]) => k !== 'PATH')
        .flatMap(([k, v]) => ['--env', `${k}=${v}`]),
    ];
  };
  return {
    name: image,
    init: (node) =>
      containerd.ctr([
        'run',
        '--rm',
        '--privileged',
        ...common(node),
        image,
        containerName(node, 'init'),
        '/app/dist/bin/aws-vpc-cni-init.cjs',
      ]),
    daemon: (node) =>
      containerd.spawnCtr([
        'run',
        '--rm',
        '--privileged',
        ...common(node),
        image,
        containerName(node, 'daemon'),
        '/app/dist/bin/aws-node.cjs',
      ]),
    async cleanup(node) {
      for (const name of names.get(node.index) ?? []) {
        await containerd.ctr(['task', 'kill', '--signal', 'SIGKILL', name], 10_000);
        await containerd.ctr(['task', 'delete', '--force', name], 10_000);
        await containerd.ctr(['container', 'delete', name], 10_000);
      }
      names.delete(node.index);
    },
  };
}
