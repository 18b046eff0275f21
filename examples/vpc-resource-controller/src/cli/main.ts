import type { AddressInfo } from 'node:net';
import { VersionApi } from '@kubernetes/client-node';
import { answerCommandLine } from '@vpc-cni-kit/command-line';
import { connectionDrops } from '../connection-drops.js';
import { type RunningController, runController } from '../controller/controller.js';
import { reportCredentialFiles } from '../controller/credential-report.js';
import { jsonLogger } from '../controller/logger.js';
import { ControllerMetrics } from '../controller/metrics.js';
import { PROBE_HTTP_LIMITS } from '../http-limits.js';
import { describeKubeError, type InClusterSource, KubeConfigError, kubeApis } from '../kube/apis.js';
import { VERSION } from '../version.js';
import { ANNOTATION_VALIDATION_PATH } from '../webhook/annotation-validation.js';
import { POD_MUTATION_PATH } from '../webhook/pod-mutation.js';
import { apiPolicyLookup } from '../webhook/policy-lookup.js';
import { serveWebhook, WebhookStartError } from '../webhook/server.js';
import { serveHealthProbes } from './health.js';
import { serveMetrics } from './metrics-server.js';
import { readCommandLine, USAGE } from './options.js';

/** What the program reads and writes. */
export interface ProgramIo {
  /** Arguments after the script. */
  readonly argv: readonly string[];
  /** The environment. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Standard output (the log). */
  readonly stdout: (s: string) => void;
  /** Standard error (usage and start failures). */
  readonly stderr: (s: string) => void;
  /** Registers a handler for SIGTERM and SIGINT. */
  readonly onSignal: (handler: (signal: string) => void) => void;
  /** Where the in-cluster ServiceAccount is mounted. @defaultValue `/var/run/secrets/kubernetes.io/serviceaccount` */
  readonly serviceAccountDir?: string | undefined;
  /**
   * How often the Kubernetes credential files (token, CA, client certificate) are re-read.
   * @defaultValue 60000 (`CREDENTIAL_REFRESH_MS`)
   */
  readonly credentialRefreshMs?: number | undefined;
}

/** How long the API server has to answer at start before the program gives up with one line. */
const API_PROBE_MS = 10_000;

/**
 * The `vpc-resource-controller` program: `--help`, `--version`, or run until SIGTERM/SIGINT (exit 0) or the loss
 * of its Lease (exit 1). A refused command line is exit 2 with the usage; a start failure is one line with a hint,
 * exit 1. Resolves with the exit status.
 */
export async function runProgram(io: ProgramIo): Promise<number> {
  const line = readCommandLine(io.argv, io.env);
  if (line.kind !== 'run')
    return answerCommandLine(
      line,
      { program: 'vpc-resource-controller', usage: USAGE, version: VERSION },
      io,
    );
  const s = line.settings;
  const fail = (what: string, hint: string) => {
    io.stderr(`vpc-resource-controller: ${what} (hint: ${hint})\n`);
    return 1;
  };

  const log = jsonLogger(io.stdout, s.logLevel);
  const metrics = new ControllerMetrics({ processMetrics: s.metrics !== undefined });
  const inCluster: InClusterSource = { env: io.env, serviceAccountDir: io.serviceAccountDir };
  let api: ReturnType<typeof kubeApis>;
  try {
    api = kubeApis(s.kubeconfig, inCluster, {
      refreshMs: io.credentialRefreshMs,
      onEvent: reportCredentialFiles(log, metrics),
    });
  } catch (e) {
    if (!(e instanceof KubeConfigError)) throw e;
    switch (e.code) {
      case 'NotInCluster':
        return fail(e.message, 'pass --kubeconfig or set KUBECONFIG');
      case 'ServiceAccountMissing':
        return fail(
          e.message,
          'mount the ServiceAccount token (automountServiceAccountToken: true), or pass --kubeconfig',
        );
      case 'ServiceAccountUnreadable':
        return fail(
          e.message,
          "the ServiceAccount's projected volume must hold the token and ca.crt as files the controller can read; check what is mounted over it, or pass --kubeconfig",
        );
      case 'KubeconfigUnreadable':
        return fail(
          `cannot load the Kubernetes configuration from ${e.message}`,
          s.kubeconfigFrom === 'KUBECONFIG'
            ? 'check the file the KUBECONFIG environment variable names'
            : 'check the --kubeconfig path',
        );
    }
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      api.config.makeApiClient(VersionApi).getCode(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${API_PROBE_MS / 1000} s`)),
          API_PROBE_MS,
        );
      }),
    ]);
  } catch (e) {
    return fail(
      `the Kubernetes API server ${api.config.getCurrentCluster()?.server ?? ''} is not reachable: ${describeKubeError(e)}`,
      s.kubeconfig === undefined
        ? "check the cluster's API endpoint and the network between this pod and it"
        : `check the server address and credentials in the kubeconfig (${s.kubeconfigFrom === 'KUBECONFIG' ? 'KUBECONFIG' : '--kubeconfig'}), or the network between this machine and the API`,
    );
  } finally {
    clearTimeout(timer);
  }

  log.log('info', 'starting', {
    version: VERSION,
    cluster: s.clusterName,
    region: s.region,
    cooldownMs: s.cooldownMs,
    leaderElection: s.leaderElection !== undefined,
  });
  /** The line saying where a server listens. */
  const listening = (msg: string, at: { address: AddressInfo }, more: Record<string, unknown> = {}) =>
    log.log('info', msg, { address: at.address.address, port: at.address.port, ...more });
  let metricsServer: Awaited<ReturnType<typeof serveMetrics>> | undefined;
  if (s.metrics !== undefined) {
    try {
      metricsServer = await serveMetrics(
        metrics,
        s.metrics,
        connectionDrops('metrics', PROBE_HTTP_LIMITS, log, metrics),
      );
      listening('serving metrics', metricsServer, { path: '/metrics' });
    } catch (e) {
      return fail(
        `cannot serve metrics on ${s.metrics.host}:${s.metrics.port}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
        'pick a free port with --metrics-bind-address, or 0 for none',
      );
    }
  }
  let controller: RunningController;
  try {
    controller = await runController(api, {
      clusterName: s.clusterName,
      region: s.region,
      ec2Endpoint: s.ec2Endpoint,
      cooldownMs: s.cooldownMs,
      concurrency: s.concurrency,
      leaderElection: s.leaderElection,
      log,
      metrics,
    });
  } catch (e) {
    metricsServer?.server.close();
    return fail(`failed to start: ${e instanceof Error ? e.message : String(e)}`, 'see the log above');
  }
  let probes: Awaited<ReturnType<typeof serveHealthProbes>> | undefined;
  if (s.healthProbes !== undefined) {
    try {
      probes = await serveHealthProbes(
        controller,
        s.healthProbes,
        connectionDrops('probes', PROBE_HTTP_LIMITS, log, metrics),
      );
      listening('serving health probes', probes);
    } catch (e) {
      metricsServer?.server.close();
      await controller.stop();
      return fail(
        `cannot serve health probes on ${s.healthProbes.host}:${s.healthProbes.port}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
        'pick a free port with --health-probe-bind-address',
      );
    }
  }
  let webhook: Awaited<ReturnType<typeof serveWebhook>> | undefined;
  if (s.webhook !== undefined) {
    try {
      webhook = await serveWebhook({ ...s.webhook, lookup: apiPolicyLookup(api), log, metrics });
      listening('serving the pod mutating webhook', webhook, {
        path: POD_MUTATION_PATH,
        validationPath: ANNOTATION_VALIDATION_PATH,
      });
    } catch (e) {
      probes?.server.close();
      metricsServer?.server.close();
      await controller.stop();
      const code = e instanceof WebhookStartError ? e.code : 'LISTEN_FAILED';
      return fail(
        `cannot serve the webhook: ${e instanceof Error ? e.message : String(e)}`,
        code === 'CERT_UNREADABLE'
          ? 'mount the serving certificate Secret, or pass --webhook-cert-file and --webhook-key-file'
          : 'pick a free port with --webhook-bind-address',
      );
    }
  }
  const closeServers = () => {
    webhook?.server.close();
    webhook?.server.closeAllConnections();
    probes?.server.close();
    metricsServer?.server.close();
    metricsServer?.server.closeAllConnections();
  };
  const stop = async () => {
    closeServers();
    await controller.stop();
  };
  return new Promise<number>((resolve) => {
    let done = false;
    io.onSignal((signal) => {
      if (done) return;
      done = true;
      log.log('info', 'stopping', { signal });
      stop().then(
        () => resolve(0),
        (e: unknown) => {
          io.stderr(`vpc-resource-controller: stopping failed: ${String(e)}\n`);
          resolve(1);
        },
      );
    });
    void controller.lost.then(async (reason) => {
      if (done) return;
      done = true;
      closeServers();
      await controller
        .stop()
        .catch((e: unknown) =>
          log.log('error', 'stopping after the lost lease failed', { error: String(e) }),
        );
      io.stderr(
        `vpc-resource-controller: lost the leader lease: ${reason} (hint: another replica acts now; this one exits to restart clean)\n`,
      );
      resolve(1);
    });
  });
}
