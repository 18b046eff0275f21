/**
 * Runs aws-cni as libcni runs a CNI 1.1 command. Debian's libcni predates GC and STATUS, so the plugin is run
 * directly: `CNI_COMMAND=<command>` with the node's conflist entry (at cniVersion 1.1.0, plus `extra`) on stdin,
 * inside the node's namespace.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterNode, ClusterPod } from '../../src/cluster.js';

/** Runs aws-cni with `command` in the node's namespace; resolves with its exit code and stdout. */
export function runPlugin(node: ClusterNode, command: string, extra: Record<string, unknown> = {}) {
  const list = JSON.parse(readFileSync(join(node.confDir, '10-aws.conflist'), 'utf8')) as {
    name: string;
    plugins: Record<string, unknown>[];
  };
  const conf = { ...list.plugins[0], cniVersion: '1.1.0', name: list.name, ...extra };
  return new Promise<{ code: number; stdout: string }>((resolve) => {
    const child = spawn('nsenter', [`--net=${node.instance.netnsPath}`, join(node.cniBinDir, 'aws-cni')], {
      env: { ...node.env, CNI_COMMAND: command, CNI_PATH: node.cniBinDir },
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.on('close', (code) => resolve({ code: code ?? -1, stdout }));
    child.stdin.end(JSON.stringify(conf));
  });
}

/** A pod as an entry of `cni.dev/valid-attachments`. */
export const attachment = (p: ClusterPod) => ({ containerID: p.containerId, ifname: 'eth0' });
