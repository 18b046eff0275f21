/**
 * The branch ENI cooldown from the `kube-system/amazon-vpc-cni` ConfigMap (`branch-eni-cooldown`, seconds), watched:
 * a controller in this process (its clock moved by the test) against ec2-simulator and kube-simulator, its
 * metrics read from its registry.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '@vpc-cni-kit/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ControllerMetrics, jsonLogger, readBranchEniCooldown } from '../src/index.js';
import { startWorld, type World } from './support/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const CM = { apiVersion: 'v1', plural: 'configmaps', name: 'amazon-vpc-cni', namespace: 'kube-system' };

function setCooldown(w: World, value: string | null): void {
  w.kube.objects.patch(
    CM.apiVersion,
    CM.plural,
    CM.name,
    { data: { 'branch-eni-cooldown': value } },
    CM.namespace,
  );
}

/** One metric sample's value from the registry's text, undefined when absent. */
async function sample(metrics: ControllerMetrics, series: string): Promise<number | undefined> {
  const text = await metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('readBranchEniCooldown', () => {
  it('reads whole seconds, raises values under 30 s to 30 s as the reference does, refuses the rest', () => {
    expect(readBranchEniCooldown(undefined)).toEqual({ kind: 'unset' });
    expect(readBranchEniCooldown({ other: '1' })).toEqual({ kind: 'unset' });
    expect(readBranchEniCooldown({ 'branch-eni-cooldown': '90' })).toEqual({ kind: 'set', ms: 90_000 });
    expect(readBranchEniCooldown({ 'branch-eni-cooldown': '10' })).toEqual({
      kind: 'set',
      ms: 30_000,
      raisedFrom: 10_000,
    });
    expect(readBranchEniCooldown({ 'branch-eni-cooldown': '86400' })).toEqual({
      kind: 'set',
      ms: 86_400_000,
    });
    for (const bad of [
      '60s',
      '1m',
      '',
      ' 60',
      '-5',
      '+60',
      '1.5',
      'abc',
      '86401',
      '99999999999',
      '9'.repeat(400),
    ])
      expect(readBranchEniCooldown({ 'branch-eni-cooldown': bad })).toMatchObject({
        kind: 'refused',
        text: bad,
      });
  });
});

describe('the cooldown from the amazon-vpc-cni ConfigMap, watched', () => {
  it('applies at start and on every change without a restart, to branches already cooling; refuses bad values with one line', async () => {
    world = await startWorld();
    const w = world;
    w.kube.objects.create('v1', 'configmaps', {
      metadata: { name: CM.name, namespace: CM.namespace },
      data: { 'branch-eni-cooldown': '90' },
    } as never);
    w.policy();
    const lines: Record<string, unknown>[] = [];
    const metrics = new ControllerMetrics();
    let offset = 0;
    const c = await w.controller({
      cooldownMs: 300,
      metrics,
      now: () => Date.now() + offset,
      log: jsonLogger((l) => lines.push(JSON.parse(l) as Record<string, unknown>)),
    });
    const cooldownLines = () =>
      lines.filter(
        (l) => String(l['msg']).includes('cooldown') || String(l['msg']).includes('branch-eni-cooldown'),
      );

    // At start: the ConfigMap's 90 s, not the flag's 300 ms; no Event for a value read at start.
    await eventually(
      'the ConfigMap value',
      async () => (await sample(metrics, 'branch_eni_cooldown_period_seconds')) === 90,
    );
    expect(cooldownLines()).toEqual([
      expect.objectContaining({
        level: 'info',
        msg: 'branch ENI cooldown updated',
        cooldownMs: 90_000,
        previousMs: 300,
      }),
    ]);

    w.pod('client-1', 'node-1', { app: 'db-client' });
    await eventually('annotated', () => w.annotation('client-1'));
    w.kube.objects.delete('v1', 'pods', 'client-1', 'default');
    await eventually('cooling', () => c.ledger()?.cooling.size === 1);
    await eventually(
      'queue depth',
      async () => (await sample(metrics, 'branch_eni_cooldown_queue_depth')) === 1,
    );

    // A minute later the branch still cools (90 s)...
    offset = 60_000;
    await new Promise((r) => setTimeout(r, 300));
    expect(w.branches()).toHaveLength(1);

    // ...until the ConfigMap says 45: applied to it at once, and an Event on every node, as the reference.
    setCooldown(w, '45');
    await eventually('deleted after the new cooldown', () => w.branches().length === 0, 10_000);
    await eventually('out of the ledger', () => c.ledger()?.cooling.size === 0);
    const events = await eventually('node events', () => {
      const e = (
        w.kube.objects.list('v1', 'events', 'default') as {
          involvedObject?: { kind?: string; name?: string };
          reason?: string;
          message?: string;
        }[]
      ).filter((x) => x.reason === 'BranchENICoolDownPeriodUpdated');
      return e.length === 2 ? e : undefined;
    });
    expect(events.map((e) => [e.involvedObject?.kind, e.involvedObject?.name, e.message]).sort()).toEqual([
      ['Node', 'node-1', 'Branch ENI cool down period has been updated to 45s'],
      ['Node', 'node-2', 'Branch ENI cool down period has been updated to 45s'],
    ]);
    expect(await sample(metrics, 'branch_eni_cooldown_period_seconds')).toBe(45);
    expect(
      await sample(metrics, 'branch_eni_opeartions_success_count{operation="deleted_branch_succesfully"}'),
    ).toBe(1);

    // Malformed, then out of range: one warning each, and the 45 s stays.
    const before = cooldownLines().length;
    setCooldown(w, '2m');
    await eventually('refused', () => cooldownLines().length === before + 1);
    expect(cooldownLines().at(-1)).toMatchObject({
      level: 'warn',
      msg: 'branch-eni-cooldown refused; the cooldown in force stays',
      value: '2m',
      cooldownMs: 45_000,
    });
    // Another key changing repeats nothing.
    w.kube.objects.patch(CM.apiVersion, CM.plural, CM.name, { data: { unrelated: 'x' } }, CM.namespace);
    setCooldown(w, '100000');
    await eventually('refused again', () => cooldownLines().length === before + 2);
    expect(cooldownLines().at(-1)).toMatchObject({ level: 'warn', value: '100000', cooldownMs: 45_000 });
    expect(await sample(metrics, 'branch_eni_cooldown_period_seconds')).toBe(45);

    // Under the minimum: raised to 30 s, one line.
    setCooldown(w, '5');
    await eventually('raised', () => cooldownLines().length === before + 3);
    expect(cooldownLines().at(-1)).toMatchObject({
      level: 'warn',
      msg: 'branch-eni-cooldown below the minimum: raised to 30 s',
      value: 5,
      cooldownMs: 30_000,
    });
    expect(await sample(metrics, 'branch_eni_cooldown_period_seconds')).toBe(30);

    // The key removed: back to the flag's value.
    setCooldown(w, null);
    await eventually(
      'back to the flag',
      async () => (await sample(metrics, 'branch_eni_cooldown_period_seconds')) === 0.3,
    );
    expect(cooldownLines().at(-1)).toMatchObject({
      msg: 'branch ENI cooldown updated',
      cooldownMs: 300,
      source: 'flag (the ConfigMap sets none)',
    });
    expect(w.kube.requests.filter((r) => r.status >= 500)).toEqual([]);
  });
});

describe('without the RBAC for the ConfigMap (an upgrade that kept the old manifests)', () => {
  it('serves pods with the flag cooldown and says why in one warning, not one a second', async () => {
    world = await startWorld();
    const w = world;
    // The package's RBAC without its ConfigMap rule, as before this change.
    const rbac = readFileSync(new URL('../manifests/rbac.yaml', import.meta.url), 'utf8');
    for (const doc of parseAllDocuments(rbac)) {
      const o = doc.toJS() as { apiVersion: string; kind: string; rules?: { resources?: string[] }[] };
      if (o.rules) o.rules = o.rules.filter((r) => !r.resources?.includes('configmaps'));
      w.kube.objects.create(o.apiVersion, `${o.kind.toLowerCase()}s`, o as never);
    }
    w.kube.objects.create('v1', 'configmaps', {
      metadata: { name: CM.name, namespace: CM.namespace },
      data: { 'branch-eni-cooldown': '90' },
    } as never);
    const kubeconfig = join(w.scratchPath, 'old-rbac.kubeconfig');
    writeFileSync(
      kubeconfig,
      w.kube.kubeconfig({ token: w.kube.mintServiceAccountToken('kube-system', 'vpc-resource-controller') }),
    );
    const lines: Record<string, unknown>[] = [];
    const metrics = new ControllerMetrics();
    await w.controller({
      kubeconfig,
      metrics,
      log: jsonLogger((l) => lines.push(JSON.parse(l) as Record<string, unknown>)),
    });
    w.policy();
    w.pod('client-1', 'node-1', { app: 'db-client' });
    await eventually('annotated', () => w.annotation('client-1'));
    await new Promise((r) => setTimeout(r, 2500));
    const warnings = lines.filter((l) => l['level'] === 'warn');
    expect(warnings).toEqual([
      expect.objectContaining({
        msg: 'cannot watch the amazon-vpc-cni ConfigMap; the cooldown in force stays',
        problem: expect.stringContaining('HTTP 403'),
      }),
    ]);
    expect(await sample(metrics, 'branch_eni_cooldown_period_seconds')).toBe(0.3);
  });
});
