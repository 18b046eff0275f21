/**
 * The vpc-resource-controller image under Debian's containerd and runc, as its Deployment runs it: containerd
 * started by this test on its own root, state and socket (stopped by its pid after); the image built by
 * deploy/image/build.mjs (on the base the aws-node image shares, so with that base cached it takes seconds) and
 * imported; one container, from the image's own entrypoint and user (nobody), read-only root file system, on the
 * host's loopback with a kube-simulator and an ec2-simulator, its kubeconfig the ServiceAccount's token after the
 * package's RBAC manifest is applied. It takes the Lease, reports the package's version and answers /healthz,
 * /readyz and /metrics; SIGTERM hands the Lease back and the container is gone.
 *
 * Part of `npm test` where the image tools are installed; `VCK_IMAGE_TEST=0` leaves it out (./support/image-suite.ts).
 */
import { type ChildProcess, spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Ec2Simulator, startEc2Simulator } from '@vpc-cni-kit/ec2-simulator';
import { type KubeSimulator, startKubeSimulator } from '@vpc-cni-kit/kube-simulator';
import { eventually, freePort, scratchDir } from '@vpc-cni-kit/testkit';
import { loadAll } from 'js-yaml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Containerd, startContainerd } from '../src/containerd.js';
import { buildImage, type ImageBuild } from '../src/image.js';
import { imageSuite } from './support/image-suite.js';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const controllerDir = join(repo, 'examples/vpc-resource-controller');
const IDENTITY = `image-test-${process.pid}`;
const CONTAINER = `vpc-rc-${process.pid}`;

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

/** The objects of a YAML manifest file. */
const manifests = (file: string): Manifest[] =>
  (loadAll(readFileSync(file, 'utf8')) as (Manifest | null)[]).filter((o): o is Manifest => o !== null);

/** The image configuration in an OCI layout, by tag. */
function imageConfig(layout: string, tag: string): { Entrypoint?: string[]; User?: string } {
  const blob = (digest: string) =>
    JSON.parse(readFileSync(join(layout, 'blobs', ...digest.split(':')), 'utf8')) as unknown;
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as {
    manifests: { digest: string; annotations?: Record<string, string> }[];
  };
  const entry = index.manifests.find((m) => m.annotations?.['org.opencontainers.image.ref.name'] === tag);
  const manifest = blob(entry?.digest ?? '') as { config: { digest: string } };
  return (blob(manifest.config.digest) as { config: { Entrypoint?: string[]; User?: string } }).config;
}

imageSuite('the vpc-resource-controller image under containerd', () => {
  const scratch = scratchDir('vck-rc-image-');
  let build: ImageBuild;
  let containerd: Containerd | undefined;
  let kube: KubeSimulator | undefined;
  let ec2: Ec2Simulator | undefined;
  let run: ChildProcess | undefined;
  let stderr = '';
  let healthPort = 0;
  let metricsPort = 0;

  beforeAll(async () => {
    build = buildImage('vpc-resource-controller');
    containerd = await startContainerd(join(scratch.path, 'containerd'));
    expect(await containerd.importImage(build.dockerArchive)).toContain(build.image);

    ec2 = await startEc2Simulator({
      rateLimits: false,
      scenario: {
        vpcs: [{ id: 'vpc-0a000000000000001', cidrBlocks: ['10.0.0.0/16'] }],
        subnets: [
          { id: 'subnet-0a000000000000001', cidrBlock: '10.0.0.0/24', availabilityZone: 'us-west-2a' },
        ],
        instances: [
          { id: 'i-0a000000000000001', instanceType: 'm5.large', subnetId: 'subnet-0a000000000000001' },
        ],
      },
    });
    kube = await startKubeSimulator();
    // The CRDs it watches, and its ServiceAccount's RBAC: the package's manifests.
    for (const o of [
      ...manifests(join(controllerDir, 'manifests/crds.yaml')),
      ...manifests(join(repo, 'deploy/kustomize/base/crds.yaml')),
      ...manifests(join(controllerDir, 'manifests/rbac.yaml')),
    ])
      kube.objects.create(o.apiVersion, `${o.kind.toLowerCase()}s`, o as never);
    // Readable by the image's user (nobody) through the bind mount.
    chmodSync(scratch.path, 0o755);
    const kubeconfig = join(scratch.path, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      kube.kubeconfig({ token: kube.mintServiceAccountToken('kube-system', 'vpc-resource-controller') }),
      { mode: 0o644 },
    );

    healthPort = await freePort();
    metricsPort = await freePort();
    const { Entrypoint: entrypoint = [] } = imageConfig(build.ociLayout, 'dev');
    run = containerd.spawnCtr([
      'run',
      '--rm',
      '--snapshotter',
      'native',
      '--net-host',
      '--read-only',
      '--mount',
      `type=bind,src=${scratch.path},dst=/config,options=rbind:ro`,
      '--env',
      'AWS_ACCESS_KEY_ID=AKID',
      '--env',
      'AWS_SECRET_ACCESS_KEY=secret',
      '--env',
      'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true',
      build.image,
      CONTAINER,
      ...entrypoint,
      '--cluster-name=image-test',
      `--region=${ec2.region}`,
      `--ec2-endpoint=${ec2.endpoint}`,
      '--kubeconfig=/config/kubeconfig',
      '--leader-elect',
      `--leader-election-identity=${IDENTITY}`,
      `--health-probe-bind-address=127.0.0.1:${healthPort}`,
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
    ]);
    run.stderr?.setEncoding('utf8').on('data', (s: string) => {
      stderr = (stderr + s).slice(-4000);
    });
  }, 300_000);

  afterAll(async () => {
    if (containerd !== undefined) {
      for (const args of [
        ['task', 'kill', '--signal', 'SIGKILL', CONTAINER],
        ['task', 'delete', '--force', CONTAINER],
        ['container', 'delete', CONTAINER],
      ])
        await containerd.ctr(args, 10_000);
      await containerd.stop();
    }
    await kube?.close();
    await ec2?.close();
    scratch.remove();
  }, 60_000);

  it('is the shared base plus one small layer; its entrypoint is the controller and its user nobody', () => {
    expect(build.layers.map((l) => l.base)).toEqual([true, true, false]);
    expect(imageConfig(build.ociLayout, 'dev')).toMatchObject({
      Entrypoint: ['/app/dist/bin/vpc-resource-controller.cjs'],
      User: '65534:65534',
    });
    // Only the controller: the program, its chunks and /app/package.json; no node_modules, no aws-node, no simulator.
    const top = build.layers.at(-1)?.digest ?? '';
    const files = spawnSync('tar', ['-tzf', join(build.ociLayout, 'blobs', ...top.split(':'))], {
      encoding: 'utf8',
    })
      .stdout.split('\n')
      .filter((f) => f !== '' && !f.endsWith('/'));
    expect(files).toContain('./app/dist/bin/vpc-resource-controller.cjs');
    expect(files).toContain('./app/package.json');
    for (const f of files)
      expect(f).toMatch(
        /^\.\/app\/(package\.json|dist\/bin\/vpc-resource-controller(\.cjs|-chunks\/[^/]+\.cjs))$/,
      );
  });

  it('takes the Lease and answers /healthz and /readyz', async () => {
    const lease = () =>
      kube?.objects.get('coordination.k8s.io/v1', 'leases', 'cp-vpc-resource-controller', 'kube-system') as
        | { spec?: { holderIdentity?: string } }
        | undefined;
    await eventually(
      `the Lease (ctr: ${stderr})`,
      () => lease()?.spec?.holderIdentity === IDENTITY,
      30_000,
      100,
    );
    const get = (path: string) =>
      fetch(`http://127.0.0.1:${healthPort}${path}`).then(
        (r) => r.status,
        () => 0,
      );
    expect(await get('/healthz')).toBe(200);
    // Ready once the leader has listed every kind it watches.
    let ready = 0;
    for (let i = 0; i < 100 && ready !== 200; i++) {
      ready = await get('/readyz');
      if (ready !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ready).toBe(200);
    // Its Prometheus metrics (prom-client is bundled into the program: nothing beyond it in the image).
    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await metrics.text();
    expect(text).toContain('leader_election_master_status{name="cp-vpc-resource-controller"} 1');
    expect(text).toContain('sgp_enabled 1');
  });

  it('reports the package version (--version, run in the container)', async () => {
    const { version } = JSON.parse(readFileSync(join(controllerDir, 'package.json'), 'utf8')) as {
      version: string;
    };
    const r = await (containerd as Containerd).ctr([
      'task',
      'exec',
      '--exec-id',
      `version-${process.pid}`,
      CONTAINER,
      '/app/dist/bin/vpc-resource-controller.cjs',
      '--version',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(`vpc-resource-controller ${version}`);
  });

  it('SIGTERM: it hands the Lease back, exits 0, and the container is removed', async () => {
    const child = run as ChildProcess;
    const exited = new Promise<number | null>((resolve) =>
      child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
    );
    expect(
      (await (containerd as Containerd).ctr(['task', 'kill', '--signal', 'SIGTERM', CONTAINER])).code,
    ).toBe(0);
    expect(await exited, stderr).toBe(0);
    const lease = kube?.objects.get(
      'coordination.k8s.io/v1',
      'leases',
      'cp-vpc-resource-controller',
      'kube-system',
    ) as {
      spec?: { holderIdentity?: string };
    };
    expect(lease.spec?.holderIdentity ?? '').toBe('');
    const left = await (containerd as Containerd).ctr(['container', 'list', '--quiet']);
    expect(left.stdout.split('\n')).not.toContain(CONTAINER);
  });
});
