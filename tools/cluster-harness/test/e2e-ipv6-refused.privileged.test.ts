/**
 * IPv6 mode's preconditions on a real start: a node in a subnet without an IPv6 CIDR refuses to start with one
 * line naming the problem, within seconds, before it changes anything on the node or in EC2 (the check comes
 * right after IMDS discovery).
 */
import { existsSync } from 'node:fs';
import { buildLibcniRunner, describePrivileged } from '@vpc-cni-kit/testkit';
import { expect, it } from 'vitest';
import { awsNodeBinDir } from '../src/bin-dir.js';
import { Cluster } from '../src/cluster.js';

const binDir = awsNodeBinDir();

describePrivileged('aws-node in IPv6 mode refuses what it cannot run on', () => {
  it('a subnet without IPv6: one line (Ipv6SubnetMissing), exit 1', async () => {
    if (!existsSync(`${binDir}/aws-node.cjs`))
      throw new Error(`build first: ${binDir}/aws-node.cjs is missing (npm run build)`);
    const started = Date.now();
    const error = await Cluster.start({
      nodes: 1,
      ipv6: true,
      // The default IPv4-only layout: the daemon is in IPv6 mode, the subnet has no IPv6 CIDR.
      network: {
        vpcCidrs: ['10.0.0.0/16'],
        subnets: [
          { id: 'subnet-0c000000000000001', cidrBlock: '10.0.0.0/20', availabilityZone: 'us-west-2a' },
        ],
        nodeSubnets: ['subnet-0c000000000000001'],
      },
      binDir,
      libcniRunner: await buildLibcniRunner(),
      simulator: { rateLimits: false },
    }).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    // What the daemon printed on stderr: one line, nothing else.
    const stderr = /exited \(1\): ([\s\S]*?)\n\n/.exec(message)?.[1] ?? '';
    expect(stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^aws-node: failed to start: ENABLE_IPv6=true, but the primary ENI's subnet subnet-0c000000000000001 has no IPv6 CIDR .*dual-stack subnet$/,
      ),
    ]);
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 60_000);
});
