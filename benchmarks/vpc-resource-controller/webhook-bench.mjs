// What the two webhook benchmarks share: a kube-simulator (HTTPS) that calls the vpc-resource-controller program's
// webhook server (its own process, HTTPS) through one of the configurations the controller's manifests ship, in
// namespace `hooked` only (`plain` is the same cluster with the webhook skipped by its namespaceSelector: the
// baseline); and the comparison table both print.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEc2Simulator } from '@vpc-cni-kit/ec2-simulator';
import { selfSignedCertificate, startKubeSimulator } from '@vpc-cni-kit/kube-simulator';
import { parseAllDocuments } from 'yaml';
import { summarize } from '../lib/timing.mjs';
import { createControllerCrds } from './crds.mjs';

const repo = new URL('../../', import.meta.url).pathname;
const SERVICE = { namespace: 'kube-system', name: 'vpc-resource-controller-webhook' };

/**
 * Starts the simulators and the controller program, with the manifests' `configurationKind`
 * (`MutatingWebhookConfiguration` or `ValidatingWebhookConfiguration`) installed with `failurePolicy: Fail` for
 * namespace `hooked`. `seed(kube, namespace)` adds each namespace's objects (`hooked`, then `plain`). Returns the
 * kube-simulator, the kubeconfig text and `close()`, which stops the program and both simulators and removes the
 * scratch directory.
 */
export async function startWebhookBench({ configurationKind, seed }) {
  const dir = mkdtempSync(join(tmpdir(), 'vpc-rc-webhook-bench-'));
  const ec2 = await startEc2Simulator({
    rateLimits: false,
    scenario: {
      vpcs: [{ id: 'vpc-0d000000000000001', cidrBlocks: ['10.0.0.0/16'] }],
      subnets: [],
      securityGroups: [],
      instances: [],
    },
  });
  let port = 0;
  const kube = await startKubeSimulator({
    resolveWebhookService: (ref) =>
      ref.namespace === SERVICE.namespace && ref.name === SERVICE.name && port
        ? { host: '127.0.0.1', port }
        : undefined,
  });
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kube.kubeconfig());
  createControllerCrds(kube);
  const tls = await selfSignedCertificate([`${SERVICE.name}.${SERVICE.namespace}.svc`]);
  writeFileSync(join(dir, 'tls.crt'), tls.cert);
  writeFileSync(join(dir, 'tls.key'), tls.key, { mode: 0o600 });
  for (const [ns, labels] of [
    ['hooked', { webhook: 'on' }],
    ['plain', {}],
  ]) {
    kube.objects.create('v1', 'namespaces', { metadata: { name: ns, labels } });
    seed(kube, ns);
  }
  const configuration = parseAllDocuments(
    readFileSync(join(repo, 'examples/vpc-resource-controller/manifests/webhook.yaml'), 'utf8'),
  )
    .map((d) => d.toJS())
    .find((o) => o.kind === configurationKind);
  configuration.webhooks[0].clientConfig.caBundle = Buffer.from(tls.cert).toString('base64');
  configuration.webhooks[0].failurePolicy = 'Fail';
  configuration.webhooks[0].namespaceSelector = { matchLabels: { webhook: 'on' } };
  const plural = `${configurationKind.toLowerCase()}s`;
  kube.objects.create('admissionregistration.k8s.io/v1', plural, configuration);

  const child = spawn(
    process.execPath,
    [
      join(repo, 'examples/vpc-resource-controller/dist/bin/vpc-resource-controller.cjs'),
      '--cluster-name=bench',
      `--region=${ec2.region}`,
      `--ec2-endpoint=${ec2.endpoint}`,
      `--kubeconfig=${kubeconfig}`,
      '--webhook-bind-address=127.0.0.1:0',
      '--metrics-bind-address=0',
      `--webhook-cert-file=${join(dir, 'tls.crt')}`,
      `--webhook-key-file=${join(dir, 'tls.key')}`,
    ],
    {
      env: { PATH: process.env.PATH, AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  port = await new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.setEncoding('utf8').on('data', (s) => {
      buf += s;
      const line = buf.split('\n').find((l) => l.includes('"serving the pod mutating webhook"'));
      if (line) resolve(JSON.parse(line).port);
    });
    child.once('exit', (code) => reject(new Error(`the controller exited (${code})`)));
  });
  return {
    kube,
    kubeconfigText: kube.kubeconfig(),
    async close() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      await kube.close();
      await ec2.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Prints `samples` (ms per variant) as a Markdown table against the `baseline` variant's median. */
export function printComparison(title, samples, baseline) {
  const base = summarize(samples[baseline]).median;
  console.log(`${title} (ms)\n`);
  console.log('| variant | median | p10–p90 | added | ratio |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const [name, xs] of Object.entries(samples)) {
    const s = summarize(xs);
    console.log(
      `| ${name} | ${s.median.toFixed(2)} | ${s.p10.toFixed(2)}–${s.p90.toFixed(2)} | +${(s.median - base).toFixed(2)} | ${(s.median / base).toFixed(2)}× |`,
    );
  }
}
