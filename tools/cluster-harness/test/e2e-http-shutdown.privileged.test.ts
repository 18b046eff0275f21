/**
 * aws-node's graceful stop with a client that stalls mid-request on its introspection port: the daemon, run as
 * on a node (in the instance's namespace, against the virtual VPC), exits on SIGTERM within seconds. It used to
 * wait for that connection for ever (a closing HTTP server stops its own timeouts), until the kubelet's SIGKILL.
 */
import { spawn } from 'node:child_process';
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterEach, expect, it } from 'vitest';
import type { Cluster } from '../src/cluster.js';
import { startOneNode } from './support/scenario.js';

describePrivileged('aws-node stop with a stalled HTTP client', () => {
  let cluster: Cluster | undefined;
  afterEach(async () => {
    await cluster?.stopDaemon(0, 'SIGKILL');
    await cluster?.close();
    cluster = undefined;
  }, 120_000);

  it('SIGTERM stops the daemon within seconds while a client holds half a request open', async () => {
    const c = await startOneNode();
    cluster = c;
    const node = c.nodes[0]!;
    // Connects, sends the start of a request's headers, and says nothing more (bash's /dev/tcp, then sleep).
    const stalled = spawn('nsenter', [
      `--net=${node.instance.netnsPath}`,
      '--',
      'bash',
      '-c',
      'exec 3<>/dev/tcp/127.0.0.1/61679; printf "GET /v1/enis HTTP/1.1\\r\\nX-Slow: " >&3; exec sleep 60',
    ]);
    try {
      await new Promise((r) => setTimeout(r, 500));
      const started = performance.now();
      const stopped = await Promise.race([
        c.stopDaemon(0).then(() => true),
        new Promise<false>((r) => setTimeout(() => r(false), 20_000)),
      ]);
      expect(stopped, 'aws-node still running 20 s after SIGTERM').toBe(true);
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(c.logTail(0, 1)).toContain('aws-node stopped');
    } finally {
      stalled.kill('SIGKILL');
    }
  }, 120_000);
});
