/**
 * Against an API server without the CRDs (kube-simulator, none applied): the controller says once per CRD that it
 * is not installed and where its manifest is, and its informers back off instead of failing every second.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type KubeSimulator, startKubeSimulator } from '@vpc-cni-kit/kube-simulator';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLogger, startController } from '../src/index.js';
import { kubeApis } from '../src/kube/apis.js';
import { type InformerFailure, startCaches } from '../src/kube/caches.js';

const dir = scratchDir('vpc-rc-missing-crds');
let sim: KubeSimulator;
let kubeconfig: string;

beforeAll(async () => {
  sim = await startKubeSimulator();
  kubeconfig = join(dir.path, 'kubeconfig');
  writeFileSync(kubeconfig, sim.kubeconfig());
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

describe('without the CRDs', () => {
  it('the informers of the missing kinds back off (doubling to the ceiling), the others list', async () => {
    const failures: { kind: string; failure: InformerFailure }[] = [];
    const caches = await startCaches(kubeApis(kubeconfig), {
      onChange: () => undefined,
      onError: (kind, _problem, failure) => failures.push({ kind, failure }),
      restartBackoff: { baseMs: 40, maxMs: 320, factor: 2, jitter: 0 },
    });
    try {
      await new Promise((r) => setTimeout(r, 1500));
    } finally {
      await caches.stop();
    }
    const cniNodes = failures.filter((f) => f.kind === 'cninodes').map((f) => f.failure);
    expect(cniNodes[0]).toEqual({ status: 404, crd: 'cninodes.vpcresources.k8s.aws', retryInMs: 40 });
    expect(cniNodes.slice(0, 5).map((f) => f.retryInMs)).toEqual([40, 80, 160, 320, 320]);
    // 40 + 80 + 160 + 320 × n within 1.5 s: a handful of attempts, not one every 40 ms.
    expect(cniNodes.length).toBeLessThanOrEqual(8);
    expect(failures.filter((f) => f.kind === 'securitygrouppolicies')[0]?.failure.crd).toBe(
      'securitygrouppolicies.vpcresources.k8s.aws',
    );
    expect(failures.some((f) => f.kind === 'pods' || f.kind === 'nodes')).toBe(false);
    expect(caches.synced()).toBe(false);
  });

  it('the controller says once per CRD that it is not installed, with where it is defined', async () => {
    const lines: Record<string, unknown>[] = [];
    const controller = await startController({
      clusterName: 'c',
      region: 'us-west-2',
      ec2Endpoint: 'http://127.0.0.1:1',
      ec2Credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' },
      kubeconfig,
      cooldownMs: 0,
      log: jsonLogger((l) => lines.push(JSON.parse(l) as Record<string, unknown>)),
    });
    try {
      // The default backoff retries after ~1 s and ~2 s: two more failures of each kind, no more lines.
      await new Promise((r) => setTimeout(r, 3500));
    } finally {
      await controller.stop();
    }
    const warnings = lines.filter((l) => l['level'] === 'warn');
    expect(warnings.map((l) => l['msg']).sort()).toEqual([
      'CRD cninodes.vpcresources.k8s.aws is not installed',
      'CRD securitygrouppolicies.vpcresources.k8s.aws is not installed',
      'waiting for every watched kind to list once',
    ]);
    expect(warnings.find((l) => l['kind'] === 'cninodes')?.['hint']).toBe(
      'apply the CRDs (deploy/kustomize/base/crds.yaml, with aws-node); the controller waits for them',
    );
    expect(warnings.find((l) => l['kind'] === 'securitygrouppolicies')?.['hint']).toMatch(
      /^apply the CRDs \(examples\/vpc-resource-controller\/manifests\/crds\.yaml\)/,
    );
    expect(controller.ready()).toBe(false);
  }, 15_000);
});
