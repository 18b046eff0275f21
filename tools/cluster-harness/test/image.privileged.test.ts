/**
 * The aws-node container image under Debian's containerd and runc, as a DaemonSet runs it: containerd started
 * by this test on its own root, state and socket (stopped by its pid after); the image built by
 * deploy/image/build.mjs and imported; on each node of a virtual VPC, the init container (privileged) and the
 * daemon container (privileged, as in the DaemonSet) started into the instance's namespace with the node's
 * directories and /var/run/netns mounted; then pods created through libcni on the host get addresses and
 * connectivity, their plugin being the single executable the init container installed.
 *
 * Part of `npm test` where the image tools are installed (scripts/system-packages.txt has them; the first image
 * build downloads Debian packages; later builds reuse the cached base layers and take seconds). `VCK_IMAGE_TEST=0` leaves it out; without mmdebstrap, umoci, skopeo or containerd it skips and says so
 * (./support/image-suite.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildLibcniRunner, scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { awsNodeBinDir } from '../src/bin-dir.js';
import { Cluster, type ClusterPod } from '../src/cluster.js';
import { type Containerd, containerdLauncher, startContainerd } from '../src/containerd.js';
import { buildImage } from '../src/image.js';
import { imageSuite } from './support/image-suite.js';

const IMAGE = 'localhost/vpc-cni-kit/aws-node:dev';

imageSuite('the aws-node image under containerd', () => {
  const scratch = scratchDir('vck-image-');
  let containerd: Containerd | undefined;
  let cluster: Cluster | undefined;
  const pods: ClusterPod[] = [];
  let archive = '';

  beforeAll(async () => {
    archive = buildImage('aws-node').dockerArchive;
    containerd = await startContainerd(join(scratch.path, 'containerd'));
    expect(await containerd.importImage(archive)).toContain(IMAGE);
    cluster = await Cluster.start({
      nodes: 2,
      binDir: awsNodeBinDir(),
      libcniRunner: await buildLibcniRunner(),
      simulator: { rateLimits: false },
      launcher: containerdLauncher(containerd, IMAGE),
    });
  }, 900_000);

  afterAll(async () => {
    await cluster?.close();
    await containerd?.stop();
    scratch.remove();
  }, 180_000);

  it('the init container installed the single-executable aws-cni and egress-cni and the core plugins on the host', () => {
    const bin = cluster?.nodes[0]?.cniBinDir as string;
    for (const plugin of ['aws-cni', 'egress-cni'])
      expect(readFileSync(join(bin, plugin)).subarray(0, 4)).toEqual(Buffer.from('\x7fELF', 'latin1'));
    for (const p of ['portmap', 'bandwidth', 'loopback', 'host-local', 'node_modules/koffi/package.json'])
      expect(existsSync(join(bin, p)), p).toBe(true);
  });

  it('pods created through libcni get VPC addresses and reach each other across nodes', async () => {
    const c = cluster as Cluster;
    const add = (i: number) =>
      c.addPod(i).catch((e: unknown) => {
        throw new Error(`${String(e)}\n${c.logTail(i, 8)}`);
      });
    pods.push(await add(0), await add(0), await add(1));
    for (const p of pods) expect(p.address).toMatch(/^10\.0\.\d+\.\d+$/);
    expect(new Set(pods.map((p) => p.address)).size).toBe(3);
    const [a, b, d] = pods as [ClusterPod, ClusterPod, ClusterPod];
    expect(await c.ping(a.netnsPath, b.address)).toBe(true);
    expect(await c.ping(a.netnsPath, d.address)).toBe(true);
    expect(await c.ping(d.netnsPath, a.address)).toBe(true);
  });

  it('the daemon container answers the image health probe, and DEL removes a pod', async () => {
    const c = cluster as Cluster;
    const pod = pods.pop() as ClusterPod;
    await c.delPod(pod);
    const node = c.nodes[0];
    const probe = await (containerd as Containerd).ctr([
      'run',
      '--rm',
      '--snapshotter',
      'native',
      '--mount',
      `type=bind,src=${dirname(node?.socket ?? '')},dst=/var/run/aws-node,options=rbind:ro`,
      IMAGE,
      `probe-${process.pid}`,
      '/app/dist/bin/grpc-health-probe.cjs',
      '-addr=unix:///var/run/aws-node/ipamd.sock',
      '-connect-timeout=5s',
      '-rpc-timeout=5s',
    ]);
    expect(probe.code).toBe(0);
    expect(probe.stdout + probe.stderr).toContain('status: SERVING');
  });
});
