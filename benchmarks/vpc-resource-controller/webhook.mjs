// Latency the pod mutating webhook adds to a pod create: kube-simulator (HTTPS) calling the vpc-resource-controller
// program's webhook (its own process, HTTPS, the policy lookup against the same API server) for pods created
// through @kubernetes/client-node. Interleaved in one run: creates in a namespace the webhook skips
// (namespaceSelector: the baseline, no call), creates of a pod no policy selects (a call, no patch), and of a pod
// a SecurityGroupPolicy selects (a call and a JSONPatch). No node, so the controller makes no branch ENI.
//   npx turbo run build --filter=@vpc-cni-kit/vpc-resource-controller... --filter=@vpc-cni-kit/ec2-simulator... --filter=@vpc-cni-kit/kube-simulator...
//   node benchmarks/vpc-resource-controller/webhook.mjs          # a first argument sets the creates per variant (default 200)

import { commandLine } from '../../scripts/lib/cli.mjs';
import { printComparison, startWebhookBench } from './webhook-bench.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    "Latency the vpc-resource-controller's pod mutating webhook adds to a pod create (kube-simulator calling the\n" +
    'program over HTTPS): creates it skips (the baseline), creates no policy selects, creates a policy selects,\n' +
    'interleaved. Build @vpc-cni-kit/vpc-resource-controller, ec2-simulator and kube-simulator first.',
  positionals: [
    { name: 'creates', type: 'count', default: 200, min: 1, description: 'timed creates per variant' },
  ],
});
const N = args.creates;
// @kubernetes/client-node takes a few hundred milliseconds to load: only once the command line is read.
const { CoreV1Api, KubeConfig } = await import('@kubernetes/client-node');
const WARMUP = 20;
const bench = await startWebhookBench({
  configurationKind: 'MutatingWebhookConfiguration',
  seed: (kube, namespace) =>
    kube.objects.create('vpcresources.k8s.aws/v1beta1', 'securitygrouppolicies', {
      metadata: { name: 'db-client', namespace },
      spec: {
        podSelector: { matchLabels: { app: 'db-client' } },
        securityGroups: { groupIds: ['sg-0d000000000000001'] },
      },
    }),
});

const kc = new KubeConfig();
kc.loadFromString(bench.kubeconfigText);
const core = kc.makeApiClient(CoreV1Api);
const variants = {
  'no webhook call (namespaceSelector skips it)': { ns: 'plain', app: 'db-client', patched: false },
  'webhook, pod not selected (no patch)': { ns: 'hooked', app: 'web', patched: false },
  'webhook, pod selected (pod-eni patch)': { ns: 'hooked', app: 'db-client', patched: true },
};
const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
let i = 0;
for (let round = 0; round < WARMUP + N; round++)
  for (const [name, v] of Object.entries(variants)) {
    const t0 = process.hrtime.bigint();
    const pod = await core.createNamespacedPod({
      namespace: v.ns,
      body: {
        metadata: { name: `p-${i++}`, labels: { app: v.app } },
        spec: { containers: [{ name: 'c', image: 'x' }] },
      },
    });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const has = pod.spec?.containers?.[0]?.resources?.limits?.['vpc.amazonaws.com/pod-eni'] !== undefined;
    if (has !== v.patched) throw new Error(`${name}: the pod-eni limit is ${has ? 'there' : 'missing'}`);
    if (round >= WARMUP) samples[name].push(ms);
  }
await bench.close();

printComparison(
  `pod create through @kubernetes/client-node, ${N} creates per variant, interleaved`,
  samples,
  'no webhook call (namespaceSelector skips it)',
);
