/**
 * The command line of `vpc-resource-controller`: read strictly (`@vpc-cni-kit/command-line`: an unknown option or
 * a stray argument is refused before anything starts), flags named as the reference controller's where it has them.
 */

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { readOptions } from '@vpc-cni-kit/command-line';
import { isLogLevel, LOG_LEVEL_CHOICES, type LogLevel } from '../controller/logger.js';
import { kubeconfigList } from '../kube/kubeconfig.js';
import { LEADER_ELECTION_ID, type LeaderElectionOptions } from '../kube/leader.js';
import { ANNOTATION_VALIDATION_PATH, DEFAULT_ANNOTATION_WRITERS } from '../webhook/annotation-validation.js';
import { POD_MUTATION_PATH } from '../webhook/pod-mutation.js';

/** Where the serving certificate Secret is mounted (the reference's controller-runtime default). */
export const DEFAULT_WEBHOOK_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';

/** The port of `/metrics` unless `--metrics-bind-address` says otherwise (the reference's flag default, `:8080`). */
export const DEFAULT_METRICS_PORT = 8080;

/** The usage text (`--help`). */
export const USAGE = `usage: vpc-resource-controller --cluster-name NAME [options]

The control-plane side of security groups for pods: a trunk ENI for every node whose CNINode asks for
SecurityGroupsForPods, a branch ENI (with the groups of the SecurityGroupPolicies that select it) for every such
pod, the vpc.amazonaws.com/pod-eni annotation and node capacity; branches deleted after a cooldown.

options:
  --cluster-name NAME            cluster name: the kubernetes.io/cluster/NAME tag of every ENI (required)
  --region REGION                AWS region (default: AWS_REGION, AWS_DEFAULT_REGION)
  --ec2-endpoint URL             EC2 endpoint (default: AWS_EC2_ENDPOINT, else the region's)
  --kubeconfig PATH              kubeconfig file (default: the KUBECONFIG list, merged as kubectl does;
                                 else in-cluster)
  --branch-eni-cooldown DURATION time a released branch ENI waits before deletion when the amazon-vpc-cni
                                 ConfigMap sets no branch-eni-cooldown (default 60s)
  --branch-concurrency N         pods whose branch ENIs are made at once (default 8)
  --leader-elect                 run as one of several replicas: act only while holding the Lease
  --leader-election-namespace NS Lease namespace (default kube-system)
  --leader-election-id NAME      Lease name (default ${LEADER_ELECTION_ID})
  --leader-election-identity ID  this replica's identity (default <hostname>_<random>)
  --lease-duration DURATION      (default 15s)
  --renew-deadline DURATION      (default 10s)
  --retry-period DURATION        (default 2s)
  --health-probe-bind-address A  serve /healthz and /readyz on HOST:PORT or :PORT (default: off)
  --metrics-bind-address A       serve Prometheus /metrics on HOST:PORT or :PORT, 0 for none (default :8080)
  --webhook-bind-address A       serve the pod webhooks over HTTPS on HOST:PORT or :PORT (default: off; the
                                 manifests use :9443): the mutation (POST ${POD_MUTATION_PATH}), pods a
                                 SecurityGroupPolicy selects get vpc.amazonaws.com/pod-eni: "1" in the limits
                                 and requests of their first container; the annotation validation (POST
                                 ${ANNOTATION_VALIDATION_PATH}), only the controller writes a pod's
                                 vpc.amazonaws.com/pod-eni annotation
  --annotation-writers USERS     comma-separated users that may set, change or remove that annotation: the
                                 controller's own identities (default ${DEFAULT_ANNOTATION_WRITERS.join(',')})
  --webhook-cert-file PATH       PEM certificate the webhook serves; its names must include
                                 <service>.<namespace>.svc (default ${DEFAULT_WEBHOOK_CERT_DIR}/tls.crt,
                                 where the manifests mount the Secret vpc-resource-controller-webhook-cert)
  --webhook-key-file PATH        its PEM private key (default ${DEFAULT_WEBHOOK_CERT_DIR}/tls.key)
  --log-level LEVEL              ${LOG_LEVEL_CHOICES} (default info)
  -h, --help                     this text
  -v, --version                  the version

DURATION: a number of seconds, or with a unit: 500ms, 30s, 2m; never negative.
`;

/** What the command line asks for. */
export type CommandLine =
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'invalid'; readonly problem: string }
  | { readonly kind: 'run'; readonly settings: Settings };

/** The settings of a run. */
export interface Settings {
  /** Cluster name. */
  readonly clusterName: string;
  /** AWS region. */
  readonly region: string;
  /** EC2 endpoint override. */
  readonly ec2Endpoint: string | undefined;
  /**
   * Kubeconfig files, merged first-wins (`--kubeconfig`: one; `KUBECONFIG`: its list without empty entries);
   * undefined: in-cluster.
   */
  readonly kubeconfig: readonly string[] | undefined;
  /** Where {@link Settings.kubeconfig} came from (for the hint when it cannot be read). */
  readonly kubeconfigFrom: '--kubeconfig' | 'KUBECONFIG' | undefined;
  /** Branch cooldown (ms). */
  readonly cooldownMs: number;
  /** Pods whose branches are made at once. */
  readonly concurrency: number;
  /** Leader election (undefined: act at once). */
  readonly leaderElection: LeaderElectionOptions | undefined;
  /** Log level. */
  readonly logLevel: LogLevel;
  /** Where to serve `/metrics` (undefined: nowhere). */
  readonly metrics: { readonly host: string; readonly port: number } | undefined;
  /** Where to serve `/healthz` and `/readyz` (undefined: nowhere). */
  readonly healthProbes: { readonly host: string; readonly port: number } | undefined;
  /** The pod mutating webhook (undefined: not served). */
  readonly webhook:
    | {
        readonly host: string;
        readonly port: number;
        readonly certFile: string;
        readonly keyFile: string;
        /** Users that may write a pod's `vpc.amazonaws.com/pod-eni` annotation. */
        readonly annotationWriters: readonly string[];
      }
    | undefined;
}

/** Parses a duration: seconds, or `<n>ms`, `<n>s`, `<n>m`. Undefined when malformed or negative. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (m === null) return undefined;
  const n = Number(m[1]);
  const ms = m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/** The options `parseArgs` reads. */
const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  'cluster-name': { type: 'string' },
  region: { type: 'string' },
  'ec2-endpoint': { type: 'string' },
  kubeconfig: { type: 'string' },
  'branch-eni-cooldown': { type: 'string' },
  'branch-concurrency': { type: 'string' },
  'leader-elect': { type: 'boolean' },
  'leader-election-namespace': { type: 'string' },
  'leader-election-id': { type: 'string' },
  'leader-election-identity': { type: 'string' },
  'lease-duration': { type: 'string' },
  'renew-deadline': { type: 'string' },
  'retry-period': { type: 'string' },
  'log-level': { type: 'string' },
  'health-probe-bind-address': { type: 'string' },
  'metrics-bind-address': { type: 'string' },
  'webhook-bind-address': { type: 'string' },
  'webhook-cert-file': { type: 'string' },
  'webhook-key-file': { type: 'string' },
  'annotation-writers': { type: 'string' },
} as const;

/**
 * Reads `argv` (without node and the script) with `env` for the defaults the AWS and Kubernetes tools share
 * (`AWS_REGION`, `AWS_DEFAULT_REGION`, `AWS_EC2_ENDPOINT`, `KUBECONFIG`).
 */
export function readCommandLine(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): CommandLine {
  const read = readOptions(argv, OPTIONS);
  if ('problem' in read) return { kind: 'invalid', problem: read.problem };
  const values = read.values;
  if (values['help']) return { kind: 'help' };
  if (values['version']) return { kind: 'version' };
  const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const invalid = (problem: string): CommandLine => ({ kind: 'invalid', problem });

  const clusterName = str('cluster-name');
  if (clusterName === undefined || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/.test(clusterName))
    return invalid(
      clusterName === undefined
        ? '--cluster-name is required'
        : `bad --cluster-name ${JSON.stringify(clusterName)}`,
    );
  const region = str('region') ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'];
  if (region === undefined) return invalid('no region: pass --region or set AWS_REGION');
  if (!/^[a-z]{2}(-[a-z0-9]+)+$/.test(region)) return invalid(`not an AWS region: ${JSON.stringify(region)}`);
  const ec2Endpoint = str('ec2-endpoint') ?? env['AWS_EC2_ENDPOINT'];
  if (ec2Endpoint !== undefined && !/^https?:\/\/[^\s/]+/.test(ec2Endpoint))
    return invalid(`--ec2-endpoint is not an http(s) URL: ${JSON.stringify(ec2Endpoint)}`);
  const flagKubeconfig = str('kubeconfig');
  const envKubeconfig = kubeconfigList(env['KUBECONFIG']);
  const kubeconfig =
    flagKubeconfig !== undefined ? [flagKubeconfig] : envKubeconfig.length > 0 ? envKubeconfig : undefined;
  const kubeconfigFrom =
    flagKubeconfig !== undefined ? '--kubeconfig' : kubeconfig !== undefined ? 'KUBECONFIG' : undefined;

  const durations: Record<string, number> = {};
  for (const [flag, fallback] of [
    ['branch-eni-cooldown', '60s'],
    ['lease-duration', '15s'],
    ['renew-deadline', '10s'],
    ['retry-period', '2s'],
  ] as const) {
    const text = str(flag) ?? fallback;
    if (/^\s*-/.test(text)) return invalid(`bad --${flag} ${JSON.stringify(text)}: must not be negative`);
    const ms = parseDuration(text);
    if (ms === undefined)
      return invalid(`bad --${flag} ${JSON.stringify(str(flag))}: a duration like 30s or 500ms`);
    durations[flag] = ms;
  }
  const concurrencyText = str('branch-concurrency') ?? '8';
  const concurrency = /^\d{1,3}$/.test(concurrencyText) ? Number(concurrencyText) : 0;
  if (concurrency < 1 || concurrency > 64)
    return invalid(`bad --branch-concurrency ${JSON.stringify(concurrencyText)}: an integer from 1 to 64`);
  const logLevel = str('log-level') ?? 'info';
  if (!isLogLevel(logLevel))
    return invalid(`bad --log-level ${JSON.stringify(logLevel)}: ${LOG_LEVEL_CHOICES}`);

  /** A `HOST:PORT` or `:PORT` flag: undefined when absent, a string when malformed. */
  const bindAddress = (flag: string): { host: string; port: number } | string | undefined => {
    const text = str(flag);
    if (text === undefined) return undefined;
    const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]*):(\d{1,5})$/.exec(text);
    const port = m ? Number(m[2]) : -1;
    if (m === null || port > 65_535) return `bad --${flag} ${JSON.stringify(text)}: HOST:PORT or :PORT`;
    return { host: (m[1] ?? '').replace(/^\[|\]$/g, ''), port };
  };
  const healthProbes = bindAddress('health-probe-bind-address');
  if (typeof healthProbes === 'string') return invalid(healthProbes);
  // controller-runtime's convention: `0` serves no metrics.
  const metrics =
    str('metrics-bind-address') === '0'
      ? undefined
      : (bindAddress('metrics-bind-address') ?? { host: '', port: DEFAULT_METRICS_PORT });
  if (typeof metrics === 'string') return invalid(metrics);
  const webhookAddress = bindAddress('webhook-bind-address');
  if (typeof webhookAddress === 'string') return invalid(webhookAddress);
  const webhook: Settings['webhook'] =
    webhookAddress === undefined
      ? undefined
      : {
          ...webhookAddress,
          certFile: str('webhook-cert-file') ?? `${DEFAULT_WEBHOOK_CERT_DIR}/tls.crt`,
          keyFile: str('webhook-key-file') ?? `${DEFAULT_WEBHOOK_CERT_DIR}/tls.key`,
          annotationWriters: DEFAULT_ANNOTATION_WRITERS,
        };
  if (
    webhook === undefined &&
    (str('webhook-cert-file') !== undefined ||
      str('webhook-key-file') !== undefined ||
      str('annotation-writers') !== undefined)
  )
    return invalid(
      '--webhook-cert-file, --webhook-key-file and --annotation-writers need --webhook-bind-address',
    );
  const writersFlag = str('annotation-writers');
  let annotationWriters = DEFAULT_ANNOTATION_WRITERS;
  if (writersFlag !== undefined) {
    const users = writersFlag.split(',').map((u) => u.trim());
    if (users.some((u) => u === ''))
      return invalid(
        `bad --annotation-writers ${JSON.stringify(writersFlag)}: comma-separated user names, none empty`,
      );
    annotationWriters = users;
  }

  const LEADER_FLAGS = [
    'leader-election-namespace',
    'leader-election-id',
    'leader-election-identity',
    'lease-duration',
    'renew-deadline',
    'retry-period',
  ] as const;
  const strayLeaderFlag = LEADER_FLAGS.find((f) => str(f) !== undefined);
  if (!values['leader-elect'] && strayLeaderFlag !== undefined)
    return invalid(`--${strayLeaderFlag} needs --leader-elect`);

  let leaderElection: LeaderElectionOptions | undefined;
  if (values['leader-elect']) {
    const lease = durations['lease-duration']!;
    const renew = durations['renew-deadline']!;
    const retry = durations['retry-period']!;
    if (!(retry < renew && renew < lease))
      return invalid('leader election needs --retry-period < --renew-deadline < --lease-duration');
    leaderElection = {
      namespace: str('leader-election-namespace') ?? 'kube-system',
      name: str('leader-election-id') ?? LEADER_ELECTION_ID,
      identity: str('leader-election-identity') ?? `${hostname()}_${randomUUID()}`,
      leaseDurationMs: lease,
      renewDeadlineMs: renew,
      retryPeriodMs: retry,
    };
  }
  return {
    kind: 'run',
    settings: {
      clusterName,
      region,
      ec2Endpoint,
      kubeconfig,
      kubeconfigFrom,
      cooldownMs: durations['branch-eni-cooldown']!,
      concurrency,
      leaderElection,
      logLevel,
      healthProbes,
      metrics,
      webhook: webhook === undefined ? undefined : { ...webhook, annotationWriters },
    },
  };
}
