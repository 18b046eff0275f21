// Latency the pod annotation validation webhook (vpod.vpc.k8s.aws) adds to a pod update: kube-simulator (HTTPS)
// calling the vpc-resource-controller program's webhook (its own process, HTTPS) on every PATCH of a pod, through
// @kubernetes/client-node. Interleaved in one run: merge patches of a label in a namespace the webhook skips
// (namespaceSelector: the baseline, no call), the same patch where the
// webhook is called and allows it, and a patch setting vpc.amazonaws.com/pod-eni by a user other than the
// controller (called, refused).
//   npx turbo run build --filter=@vpc-cni-kit/vpc-resource-controller... --filter=@vpc-cni-kit/ec2-simulator... --filter=@vpc-cni-kit/kube-simulator...
//   node benchmarks/vpc-resource-controller/annotation-validation.mjs   # a first argument sets the patches per variant (default 200)

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEc2Simulator } from '@vpc-cni-kit/ec2-simulator';
import { selfSignedCertificate, startKubeSimulator } from '@vpc-cni-kit/kube-simulator';
import { parseAllDocuments } from 'yaml';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { summarize } from '../lib/timing.mjs';
import { createControllerCrds } from './crds.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    "Latency the vpc-resource-controller's pod annotation validation webhook adds to a pod update (kube-simulator\n" +
    'calling the program over HTTPS): patches it skips (the baseline), patches it allows, forged pod-eni\n' +
    'annotations it refuses, interleaved. Build @vpc-cni-kit/vpc-resource-controller, ec2-simulator and\n' +
    'kube-simulator first.',
  positionals: [
    { name: 'patches', type: 'count', default: 200, min: 1, description: 'timed patches per variant' },
  ],
});
const N = args.patches;
// @kubernetes/client-node takes a few hundred milliseconds to load: only once the command line is read.
const { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } = await import('@kubernetes/client-node');
const WARMUP = 20;
const repo = new URL('../../', import.meta.url).pathname;
const SERVICE = { namespace: 'kube-system', name: 'vpc-resource-controller-webhook' };

const dir = mkdtempSync(join(tmpdir(), 'vpc-rc-vpod-bench-'));
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
  kube.objects.create('v1', 'pods', {
    metadata: { name: 'p', namespace: ns },
    spec: { containers: [{ name: 'c', image: 'x' }] },
  });
}
const vwc = parseAllDocuments(
  readFileSync(join(repo, 'examples/vpc-resource-controller/manifests/webhook.yaml'), 'utf8'),
)
  .map((d) => d.toJS())
  .find((o) => o.kind === 'ValidatingWebhookConfiguration');
vwc.webhooks[0].clientConfig.caBundle = Buffer.from(tls.cert).toString('base64');
vwc.webhooks[0].failurePolicy = 'Fail';
vwc.webhooks[0].namespaceSelector = { matchLabels: { webhook: 'on' } };
kube.objects.create('admissionregistration.k8s.io/v1', 'validatingwebhookconfigurations', vwc);

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

const kc = new KubeConfig();
kc.loadFromString(kube.kubeconfig());
const core = kc.makeApiClient(CoreV1Api);
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const variants = {
  'no webhook call (namespaceSelector skips it)': { ns: 'plain', forged: false },
  'webhook called, label patch allowed': { ns: 'hooked', forged: false },
  'webhook called, forged pod-eni refused': { ns: 'hooked', forged: true },
};
const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
let i = 0;
for (let round = 0; round < WARMUP + N; round++)
  for (const [name, v] of Object.entries(variants)) {
    const body = v.forged
      ? { metadata: { annotations: { 'vpc.amazonaws.com/pod-eni': `[{"eniId":"eni-${i++}"}]` } } }
      : { metadata: { labels: { n: String(i++) } } };
    const t0 = process.hrtime.bigint();
    const refused = await core
      .patchNamespacedPod({ name: 'p', namespace: v.ns, body }, merge)
      .then(() => false)
      .catch((e) => {
        if (e?.code !== 403) throw e;
        return true;
      });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (refused !== v.forged) throw new Error(`${name}: ${refused ? 'refused' : 'allowed'}`);
    if (round >= WARMUP) samples[name].push(ms);
  }
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
await kube.close();
await ec2.close();
rmSync(dir, { recursive: true, force: true });

const base = summarize(samples['no webhook call (namespaceSelector skips it)']).median;
console.log(`pod merge patch through @kubernetes/client-node, ${N} patches per variant, interleaved (ms)\n`);
console.log('| variant | median | p10–p90 | added | ratio |');
console.log('| --- | --- | --- | --- | --- |');
for (const [name, xs] of Object.entries(samples)) {
  const s = summarize(xs);
  console.log(
    `| ${name} | ${s.median.toFixed(2)} | ${s.p10.toFixed(2)}–${s.p90.toFixed(2)} | +${(s.median - base).toFixed(2)} | ${(s.median / base).toFixed(2)}× |`,
  );
}
