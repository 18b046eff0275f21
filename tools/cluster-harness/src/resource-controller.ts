/**
 * The VPC resource controller of a cluster (security groups for pods): the built `vpc-resource-controller`
 * program run as a process of this machine, against the cluster's kube-simulator (as its own ServiceAccount, so
 * its RBAC manifest decides what it may do) and the VPC's EC2 endpoint on loopback — where it runs in EKS too:
 * in the control plane, outside every node. Stopped by the harness, by its pid.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { selfSignedCertificate } from '@vpc-cni-kit/kube-simulator';
import { type ClusterKubeApi, CONTROLLER_WEBHOOK_SERVICE } from './kube-api.js';

/** The cluster name the harness's controller tags its ENIs with (`kubernetes.io/cluster/<name>`). */
export const HARNESS_CLUSTER_NAME = 'vck-harness';

/** The built `vpc-resource-controller` program: the installed package's `dist/bin`. */
export function resourceControllerBin(): string {
  const require = createRequire(import.meta.url);
  return join(
    dirname(require.resolve('@vpc-cni-kit/vpc-resource-controller/package.json')),
    'dist/bin/vpc-resource-controller.cjs',
  );
}

/** Options of {@link ResourceController.start}. */
export interface ResourceControllerOptions {
  /** How long a released branch ENI waits before it is deleted (`--branch-eni-cooldown`, ms; default 1000). */
  readonly cooldownMs?: number;
  /** `--log-level` (default info; the harness knows it acts from its info line, so no quieter). */
  readonly logLevel?: 'debug' | 'info';
  /** Where the kubeconfig goes (a file of the cluster's work directory). */
  readonly kubeconfigPath: string;
  /** The EC2 endpoint on loopback. */
  readonly ec2Endpoint: string;
  /** AWS region. */
  readonly region: string;
}

/** One running controller process; its JSON log lines are kept. */
export class ResourceController {
  /** Every line the controller logged (JSON), oldest first. */
  readonly log: string[] = [];
  #stderr = '';

  private constructor(
    readonly child: ChildProcess,
    private readonly kube: ClusterKubeApi,
  ) {
    child.stdout?.setEncoding('utf8').on('data', (s: string) => {
      for (const line of s.split('\n')) if (line !== '') this.log.push(line);
    });
    child.stderr?.setEncoding('utf8').on('data', (s: string) => {
      this.#stderr += s;
    });
  }

  /** Its process id. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether it still runs. */
  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** What it wrote on stderr (start failures: one line with a hint). */
  get stderr(): string {
    return this.#stderr;
  }

  /**
   * Starts the program and waits until it acts and serves its webhook (its `acting: watching the cluster` and
   * `serving the pod mutating webhook` lines), then points the webhook Service at it; a program that exits
   * first, or does not get there in `timeoutMs`, is an error naming its stderr.
   */
  static async start(
    kube: ClusterKubeApi,
    o: ResourceControllerOptions,
    timeoutMs = 20_000,
  ): Promise<ResourceController> {
    writeFileSync(o.kubeconfigPath, kube.controllerKubeconfig(), { mode: 0o600 });
    // Its pod webhook, served over HTTPS on loopback with a certificate for the Service's name, as the
    // manifests' Secret would hold; the API server calls it for every pod create.
    const tls = await selfSignedCertificate([`${CONTROLLER_WEBHOOK_SERVICE}.kube-system.svc`]);
    const certFile = join(dirname(o.kubeconfigPath), 'webhook-tls.crt');
    const keyFile = join(dirname(o.kubeconfigPath), 'webhook-tls.key');
    writeFileSync(certFile, tls.cert);
    writeFileSync(keyFile, tls.key, { mode: 0o600 });
    const child = spawn(
      process.execPath,
      [
        resourceControllerBin(),
        '--cluster-name',
        HARNESS_CLUSTER_NAME,
        '--region',
        o.region,
        '--ec2-endpoint',
        o.ec2Endpoint,
        '--kubeconfig',
        o.kubeconfigPath,
        '--branch-eni-cooldown',
        `${o.cooldownMs ?? 1000}ms`,
        '--log-level',
        o.logLevel ?? 'info',
        '--webhook-bind-address',
        '127.0.0.1:0',
        '--webhook-cert-file',
        certFile,
        '--webhook-key-file',
        keyFile,
        // Metrics on a port of its own choosing (the default :8080 could be taken on a shared machine).
        '--metrics-bind-address',
        '127.0.0.1:0',
      ],
      {
        env: {
          PATH: process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin',
          AWS_ACCESS_KEY_ID: 'AKIDSIMULATOR',
          AWS_SECRET_ACCESS_KEY: 'simulator-secret',
          AWS_EC2_METADATA_DISABLED: 'true',
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const rc = new ResourceController(child, kube);
    const deadline = Date.now() + timeoutMs;
    const ready = () =>
      rc.log.some((l) => l.includes('"acting: watching the cluster"')) &&
      rc.log.some((l) => l.includes('"serving the pod mutating webhook"'));
    while (!ready()) {
      if (!rc.running)
        throw new Error(`vpc-resource-controller exited (${child.exitCode}): ${rc.stderr.trim()}`);
      if (Date.now() > deadline) {
        await rc.stop('SIGKILL');
        throw new Error(`vpc-resource-controller not acting after ${timeoutMs} ms: ${rc.stderr.trim()}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const served = rc.log.find((l) => l.includes('"serving the pod mutating webhook"'));
    kube.serveWebhookAt(
      { host: '127.0.0.1', port: (JSON.parse(served!) as { port: number }).port },
      tls.cert,
    );
    return rc;
  }

  /** Stops it with `signal` (SIGTERM: graceful; SIGKILL: a crash) and waits for the exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    this.kube.serveWebhookAt(undefined);
    if (!this.running) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.kill(signal);
    await exited;
  }
}
