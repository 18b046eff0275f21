/**
 * CNI 1.1 GC and STATUS of aws-cni on the virtual VPC (issue #20). Debian's libcni predates GC and STATUS, so
 * the plugin is run as libcni runs it: `CNI_COMMAND=GC` / `STATUS` with the node's conflist entry (at
 * cniVersion 1.1.0) on stdin, inside the node's namespace.
 */
import { readFileSync } from 'node:fs';
import { netnsDel } from '@vpc-cni-kit/netlink';
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterEach, expect, it } from 'vitest';
import type { Cluster } from '../src/cluster.js';
import { inNetns } from '../src/exec.js';
import { attachment, runPlugin } from './support/run-plugin.js';
import { enis, startOneNode } from './support/scenario.js';

describePrivileged('CNI GC and STATUS', () => {
  let cluster: Cluster | undefined;
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  }, 120_000);

  it('GC releases exactly the stale attachments: never one in use, never a valid one', async () => {
    const c = await startOneNode({ env: { WARM_ENI_TARGET: '0', WARM_IP_TARGET: '2' } });
    cluster = c;
    const node = c.nodes[0]!;
    const [a, b, stale] = [await c.addPod(0), await c.addPod(0), await c.addPod(0)];
    // The runtime lost `stale` without a DEL: its namespace (and with it its veth) is gone.
    netnsDel(stale.netns);
    c.pods.splice(c.pods.indexOf(stale), 1);
    expect((await enis(c)).AssignedIPs).toBe(3);

    // `b` is left out of the list too, but its pod is still plumbed: in use, so kept.
    const gc = await runPlugin(node, 'GC', { 'cni.dev/valid-attachments': [attachment(a)] });
    expect(gc.code).toBe(0);
    expect((await enis(c)).AssignedIPs).toBe(2);
    const log = readFileSync(node.logFile, 'utf8');
    const line = log.split('\n').find((l) => l.includes('GC of stale attachments'));
    expect(JSON.parse(line!)).toMatchObject({
      released: [stale.address],
      kept: [{ address: b.address, why: 'in-use' }],
    });
    const rules = (await inNetns(node.instance.netnsPath, ['ip', 'rule', 'show'])).stdout;
    expect(rules).not.toMatch(new RegExp(`to ${stale.address}\\b`));
    expect(rules).toMatch(new RegExp(`to ${a.address}\\b`));
    expect(await c.checkPod(a)).toEqual({ ok: true });
    expect(await c.checkPod(b)).toEqual({ ok: true });
    // /v1/enis keeps the released address's history (the reference's UnassignedTime).
    type Eni = {
      AvailableIPv4Cidrs: Record<string, { IPAddresses: Record<string, { UnassignedTime: string }> }>;
    };
    const history = Object.values((await enis(c)).ENIs as Record<string, Eni>)
      .flatMap((e) => Object.values(e.AvailableIPv4Cidrs))
      .map((cidr) => cidr.IPAddresses[stale.address])
      .find((x) => x !== undefined);
    expect(history?.UnassignedTime).not.toBe('0001-01-01T00:00:00Z');
    expect(Date.parse(history!.UnassignedTime)).toBeGreaterThan(0);

    // A second GC with every live attachment listed changes nothing.
    expect((await runPlugin(node, 'GC', { 'cni.dev/valid-attachments': [a, b].map(attachment) })).code).toBe(
      0,
    );
    expect((await enis(c)).AssignedIPs).toBe(2);
  }, 120_000);

  it('STATUS is ready while an address is free or can be had, not ready (50) when the pool is empty and cannot grow', async () => {
    // IMDS-only: nothing can be provisioned; the node starts with no secondary address at all.
    const c = await startOneNode({ env: { ENABLE_IMDS_ONLY_MODE: 'true' } });
    cluster = c;
    const node = c.nodes[0]!;
    const notReady = await runPlugin(node, 'STATUS');
    expect(notReady.code).not.toBe(0);
    expect(JSON.parse(notReady.stdout)).toMatchObject({ code: 50 });
    expect(JSON.parse(notReady.stdout).msg).toContain('provisions none');

    await c.stopDaemon(0);
    node.env = { ...node.env, ENABLE_IMDS_ONLY_MODE: 'false' };
    await c.startDaemon(0);
    expect((await runPlugin(node, 'STATUS')).code).toBe(0);
  }, 120_000);
});
