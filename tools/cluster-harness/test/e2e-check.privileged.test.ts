/**
 * CNI CHECK through libcni with the daemon's own conflist (issue #20): passes for a healthy pod; fails with the
 * reference plugin's code for every failure (999) and names what is missing when a rule on the node or a route
 * in the pod is removed.
 */
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterEach, expect, it } from 'vitest';
import type { Cluster } from '../src/cluster.js';
import { inNetns } from '../src/exec.js';
import { enis, startOneNode } from './support/scenario.js';

describePrivileged('CNI CHECK', () => {
  let cluster: Cluster | undefined;
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  }, 120_000);

  it('passes for a healthy pod and fails with 999 once its rule or its default route is gone', async () => {
    const c = await startOneNode();
    cluster = c;
    const node = c.nodes[0]!;
    const [a, b] = [await c.addPod(0), await c.addPod(0)];
    expect(await c.checkPod(a)).toEqual({ ok: true });
    expect(await c.checkPod(b)).toEqual({ ok: true });
    // /v1/enis serves the reference's RouteTableID and SubnetID.
    const primary = Object.values((await enis(c)).ENIs)[0] as Record<string, unknown>;
    expect(primary).toMatchObject({
      IsPrimary: true,
      RouteTableID: 254,
      SubnetID: 'subnet-0c000000000000001',
    });

    // The node's to-pod rule of pod a.
    const del = await inNetns(node.instance.netnsPath, [
      'ip',
      'rule',
      'del',
      'to',
      `${a.address}/32`,
      'lookup',
      'main',
      'priority',
      '512',
    ]);
    expect(del.code).toBe(0);
    const broken = await c.checkPod(a);
    expect(broken).toMatchObject({ ok: false, error: { code: 999 } });
    expect(JSON.stringify(broken)).toContain(a.address);
    expect(await c.checkPod(b)).toEqual({ ok: true });

    // Pod b's default route, inside its namespace.
    expect((await inNetns(b.netnsPath, ['ip', 'route', 'del', 'default'])).code).toBe(0);
    const podBroken = await c.checkPod(b);
    expect(podBroken).toMatchObject({ ok: false, error: { code: 999 } });
    expect(JSON.stringify(podBroken)).toContain('pod eth0');
  }, 120_000);
});
