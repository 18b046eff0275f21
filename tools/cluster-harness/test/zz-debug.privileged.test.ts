import { buildLibcniRunner, describePrivileged } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, it } from 'vitest';
import { awsNodeBinDir } from '../src/bin-dir.js';
import { Cluster } from '../src/cluster.js';
import { inNetns } from '../src/exec.js';
import { SGP, SMALL_TRUNK_TYPE, sgpLayout, sgpPolicies } from '../src/sgp-layout.js';

describePrivileged('debug', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await Cluster.start({
      nodes: 1,
      binDir: awsNodeBinDir(),
      libcniRunner: await buildLibcniRunner(),
      simulator: { rateLimits: false },
      network: sgpLayout,
      podEni: { mode: 'strict' },
      instanceTypes: [SMALL_TRUNK_TYPE],
      database: { securityGroupId: SGP.databaseGroup, port: SGP.databasePort },
    });
    for (const p of sgpPolicies) cluster.kube.createSecurityGroupPolicy(p);
    await cluster.startController({ cooldownMs: 1000 });
    await cluster.waitForTrunks();
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  }, 60_000);
  it('dump', async () => {
    const a = await cluster.addPod(0, { name: 'client-a', labels: { app: 'db-client' } });
    const ns = cluster.nodes[0]!.instance.netnsPath;
    const sh = async (n: string, c: string) =>
      console.log(`### ${c}\n`, (await inNetns(n, ['sh', '-c', c])).stdout);
    console.log(JSON.stringify(a.result), a.branch, cluster.trunkOf(0));
    await sh(ns, 'ip -d link; ip addr; ip rule; ip route show table all | grep -v "^local\\|^broadcast"');
    await sh(
      a.netnsPath,
      'ip addr; ip route; ip neigh; ping -c1 -W1 ' + cluster.database!.address + '; ip neigh',
    );
    await sh(ns, 'ip -s link show; ip neigh');
    const r = cluster.vpc.describe().router.netnsPath;
    await sh(r, 'ip -s link; ip neigh; ip route | head -30');
    console.log(JSON.stringify(cluster.vpc.routerView(), null, 1));
  });
});
