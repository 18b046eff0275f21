/**
 * Several VPC CIDR blocks on the virtual VPC: the node's SNAT chain skips every block of the VPC, and a block
 * associated while the daemon runs stops being SNATed within one refresh period (the reference's 30 s).
 */
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Cluster, ClusterPod } from '../src/cluster.js';
import { inNetns } from '../src/exec.js';
import { tcpConnect, tcpPeerProbe } from './peer-probe.js';
import { eventually, startOneNode } from './support/scenario.js';

const snatChain = async (c: Cluster): Promise<string[]> =>
  (await inNetns(c.nodes[0]!.instance.netnsPath, ['iptables-save', '-t', 'nat'])).stdout
    .split('\n')
    .filter((l) => l.startsWith('-A AWS-SNAT-CHAIN'));

describePrivileged('aws-node with several VPC CIDR blocks', () => {
  let cluster: Cluster;
  let pod: ClusterPod;

  beforeAll(async () => {
    cluster = await startOneNode({
      network: {
        vpcCidrs: ['10.20.0.0/16', '100.64.0.0/16'],
        subnets: [
          { id: 'subnet-0a200000000000001', cidrBlock: '10.20.0.0/20', availabilityZone: 'us-west-2a' },
          { id: 'subnet-0a640000000000001', cidrBlock: '100.64.0.0/19', availabilityZone: 'us-west-2a' },
        ],
        nodeSubnets: ['subnet-0a200000000000001'],
      },
    });
    pod = await cluster.addPod(0);
  }, 180_000);

  afterAll(async () => {
    await cluster?.close();
  }, 120_000);

  it('skips every VPC block in one chain (the v1.23 shape) and SNATs the rest to the node address', async () => {
    const nodeIp = cluster.nodes[0]!.instance.privateIp;
    expect(nodeIp).toMatch(/^10\.20\./);
    expect(pod.address).toMatch(/^10\.20\./);
    expect(await snatChain(cluster)).toEqual([
      '-A AWS-SNAT-CHAIN-0 -d 100.64.0.0/16 -m comment --comment "AWS SNAT CHAIN" -j RETURN',
      '-A AWS-SNAT-CHAIN-0 -d 10.20.0.0/16 -m comment --comment "AWS SNAT CHAIN" -j RETURN',
      `-A AWS-SNAT-CHAIN-0 ! -o vlan+ -m comment --comment "AWS, SNAT" -m addrtype ! --dst-type LOCAL -j SNAT --to-source ${nodeIp} --random-fully`,
    ]);
    const { internet } = cluster.vpc.describe();
    const out = tcpPeerProbe(internet.netnsPath, internet.host, 18090);
    await new Promise((r) => setTimeout(r, 300));
    expect(await tcpConnect(pod.netnsPath, internet.host, 18090)).toBe(true);
    expect(await out.peer).toBe(nodeIp);
  });

  it('stops SNATing a block associated while running within one refresh period (30 s)', async () => {
    const started = Date.now();
    cluster.vpc.simulator.state.associateVpcCidr('vpc-0c000000000000001', '100.65.0.0/16');
    const want = '-A AWS-SNAT-CHAIN-0 -d 100.65.0.0/16 -m comment --comment "AWS SNAT CHAIN" -j RETURN';
    await eventually(
      'the new block in the SNAT chain',
      async () => (await snatChain(cluster)).includes(want),
      35_000,
    );
    const tookMs = Date.now() - started;
    expect(tookMs).toBeLessThan(31_000);
    const chain = await snatChain(cluster);
    expect(chain.at(-1)).toContain('-j SNAT --to-source');
    expect(chain).toHaveLength(4);
    // The connmark side follows too (pod→new block keeps its source: no mark, so no SNAT).
    const nft = (
      await inNetns(cluster.nodes[0]!.instance.netnsPath, ['nft', 'list', 'table', 'ip', 'aws-cni'])
    ).stdout;
    expect(nft).toContain('ip daddr 100.65.0.0/16 return');
    const log = (await inNetns(cluster.nodes[0]!.instance.netnsPath, ['cat', cluster.nodes[0]!.logFile]))
      .stdout;
    expect(log).toContain('VPC CIDR blocks changed; SNAT rules re-applied');
    console.log(`VPC CIDR association → SNAT chain updated in ${tookMs} ms (refresh period 30 s)`);
  }, 60_000);
});
