/**
 * How the cluster starts a node's init step and daemon: as processes of this machine's Node running a build's
 * dist/bin (the default), or as containers of the aws-node image under containerd (./containerd.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { ClusterNode } from './cluster.js';
import { inNetns, type Ran } from './exec.js';

/** Starts a node's programs. Each runs inside the node's instance network namespace. */
export interface NodeLauncher {
  /** What runs the node (for messages): e.g. `processes` or the image name. */
  readonly name: string;
  /** Runs `aws-vpc-cni-init` for `node` to completion. */
  init(node: ClusterNode): Promise<Ran>;
  /** Starts `aws-node` for `node`; signals sent to the returned process reach the daemon, and it exits with it. */
  daemon(node: ClusterNode): ChildProcess;
  /** Removes what starting the daemon left behind, once it has exited (e.g. its container). */
  cleanup?(node: ClusterNode): Promise<void>;
}

/** The default launcher: `node <binDir>/aws-vpc-cni-init.cjs` and `node <binDir>/aws-node.cjs` via nsenter. */
export function processLauncher(binDir: string): NodeLauncher {
  return {
    name: 'processes',
    init: (node) =>
      inNetns(node.instance.netnsPath, [process.execPath, join(binDir, 'aws-vpc-cni-init.cjs')], {
        env: node.env,
      }),
    daemon: (node) =>
      spawn('nsenter', [`--net=${node.instance.netnsPath}`, process.execPath, join(binDir, 'aws-node.cjs')], {
        env: node.env,
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
  };
}
