// Latency the pod annotation validation webhook (vpod.vpc.k8s.aws) adds to a pod update: kube-simulator (HTTPS)
// calling the vpc-resource-controller program's webhook (its own process, HTTPS) on every PATCH of a pod, through
// @kubernetes/client-node. Interleaved in one run: merge patches of a label in a namespace the webhook skips
// (namespaceSelector: the baseline, no call), the same patch where the
// webhook is called and allows it, and a patch setting vpc.amazonaws.com/pod-eni by a user other than the
// controller (called, refused).
//   npx turbo run build --filter=@vpc-cni-kit/vpc-resource-controller... --filter=@vpc-cni-kit/ec2-simulator... --filter=@vpc-cni-kit/kube-simulator...
//   node benchmarks/vpc-resource-controller/annotation-validation.mjs   # a first argument sets the patches per variant (default 200)

import { commandLine } from '../../scripts/lib/cli.mjs';
import { printComparison, startWebhookBench } from './webhook-bench.mjs';

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
const bench = await startWebhookBench({
  configurationKind: 'ValidatingWebhookConfiguration',
  seed: (kube, namespace) =>
    kube.objects.create('v1', 'pods', {
      metadata: { name: 'p', namespace },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    }),
});

const kc = new KubeConfig();
kc.loadFromString(bench.kubeconfigText);
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
await bench.close();

printComparison(
  `pod merge patch through @kubernetes/client-node, ${N} patches per variant, interleaved`,
  samples,
  'no webhook call (namespaceSelector skips it)',
);
