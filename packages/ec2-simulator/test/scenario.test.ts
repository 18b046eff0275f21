import { describe, expect, it } from 'vitest';
import { isScenarioError, parseScenario, ScenarioError, startEc2Simulator } from '../src/index.js';
import { scenario } from './helpers.js';

function fails(input: unknown): { code: string; path: string } {
  try {
    parseScenario(input);
  } catch (e) {
    if (isScenarioError(e)) return { code: e.code, path: e.path };
    throw e;
  }
  throw new Error('expected a ScenarioError');
}

const base = JSON.parse(JSON.stringify(scenario)) as Record<string, unknown[]>;
const withSubnet = (patch: Record<string, unknown>) => ({
  ...base,
  subnets: [{ ...(base['subnets']![0] as object), ...patch }, ...base['subnets']!.slice(1)],
});

describe('parseScenario', () => {
  it('fills defaults and is idempotent', () => {
    const once = parseScenario({
      vpcs: [{ id: 'vpc-0a000000000000001', cidrBlocks: ['10.0.0.0/16'] }],
      subnets: [{ id: 'subnet-0a000000000000001', cidrBlock: '10.0.0.0/24' }],
    });
    expect(once.region).toBe('us-west-2');
    expect(once.accountId).toBe('123456789012');
    expect(once.subnets[0]).toMatchObject({ vpcId: 'vpc-0a000000000000001', availabilityZone: 'us-west-2a' });
    expect(parseScenario(once)).toEqual(once);
    expect(parseScenario(parseScenario(scenario))).toEqual(parseScenario(scenario));
  });

  it('names the offending field with a stable code', () => {
    expect(fails(null)).toEqual({ code: 'SCENARIO_INVALID', path: '' });
    expect(fails({ ...base, colour: 1 })).toEqual({ code: 'SCENARIO_INVALID', path: '.colour' });
    expect(fails({ ...base, vpcs: [] })).toEqual({ code: 'SCENARIO_INVALID', path: 'vpcs' });
    expect(fails({ ...base, region: 'mars' })).toEqual({ code: 'SCENARIO_INVALID', path: 'region' });
    expect(fails(withSubnet({ id: 'subnet-x' }))).toEqual({
      code: 'SCENARIO_INVALID',
      path: 'subnets[0].id',
    });
    expect(fails(withSubnet({ cidrBlock: '10.0.0.1/24' }))).toEqual({
      code: 'SCENARIO_INVALID',
      path: 'subnets[0].cidrBlock',
    });
    expect(fails(withSubnet({ cidrBlock: '10.0.0.0/29' }))).toEqual({
      code: 'SCENARIO_INVALID',
      path: 'subnets[0].cidrBlock',
    });
    expect(fails(withSubnet({ cidrBlock: '172.16.0.0/24' }))).toEqual({
      code: 'SCENARIO_CIDR_CONFLICT',
      path: 'subnets[0].cidrBlock',
    });
    expect(fails(withSubnet({ cidrBlock: '10.0.1.0/25' }))).toEqual({
      code: 'SCENARIO_CIDR_CONFLICT',
      path: 'subnets[2].cidrBlock',
    });
    expect(fails(withSubnet({ availabilityZone: 'eu-west-1a' }))).toEqual({
      code: 'SCENARIO_INVALID',
      path: 'subnets[0].availabilityZone',
    });
    expect(fails(withSubnet({ vpcId: 'vpc-0fffffffffffffff0' }))).toEqual({
      code: 'SCENARIO_UNKNOWN_REFERENCE',
      path: 'subnets[0].vpcId',
    });
    expect(fails(withSubnet({ tags: { k: 1 } }))).toEqual({
      code: 'SCENARIO_INVALID',
      path: 'subnets[0].tags.k',
    });
    expect(fails({ ...base, subnets: [...base['subnets']!, base['subnets']![0]] })).toMatchObject({
      code: 'SCENARIO_DUPLICATE_ID',
    });
    const inst = (patch: Record<string, unknown>) => ({
      ...base,
      instances: [{ ...(base['instances']![0] as object), ...patch }],
    });
    expect(fails(inst({ instanceType: 'x1.tiny' }))).toEqual({
      code: 'SCENARIO_INVALID',
      path: 'instances[0].instanceType',
    });
    expect(fails(inst({ subnetId: 'subnet-0fffffffffffffff0' }))).toEqual({
      code: 'SCENARIO_UNKNOWN_REFERENCE',
      path: 'instances[0].subnetId',
    });
    expect(fails(inst({ securityGroupIds: ['sg-0fffffffffffffff0'] }))).toEqual({
      code: 'SCENARIO_UNKNOWN_REFERENCE',
      path: 'instances[0].securityGroupIds[0]',
    });
    expect(fails(inst({ privateIpAddress: '10.0.0.2' }))).toEqual({
      code: 'SCENARIO_INVALID',
      path: 'instances[0].privateIpAddress',
    });
  });

  it('startEc2Simulator rejects an invalid scenario before listening', async () => {
    await expect(startEc2Simulator({ scenario: { vpcs: 'x' } })).rejects.toBeInstanceOf(ScenarioError);
  });

  it('declares security group rules and trunk-capable instance types', async () => {
    const declared = {
      ...base,
      instanceTypes: [
        {
          name: 'm6i.large',
          maximumNetworkInterfaces: 3,
          ipv4AddressesPerInterface: 10,
          branchInterfaces: 9,
        },
      ],
      securityGroups: [
        {
          id: 'sg-0a000000000000001',
          name: 'db',
          ingress: [
            { ipProtocol: 'tcp', fromPort: 5432, toPort: 5432, referencedGroupId: 'sg-0b000000000000002' },
          ],
          egress: [{ ipProtocol: 'udp', fromPort: 53, toPort: 53, cidrIpv4: '10.0.0.0/16' }],
        },
        { id: 'sg-0b000000000000002', name: 'clients' },
      ],
      instances: [{ instanceType: 'm6i.large', subnetId: 'subnet-0a000000000000001' }],
    };
    expect(parseScenario(parseScenario(declared))).toEqual(parseScenario(declared));
    const sim = await startEc2Simulator({ scenario: declared, rateLimits: false });
    try {
      expect(sim.state.instanceTypes().get('m6i.large')).toMatchObject({
        isTrunkingCompatible: true,
        branchInterfaces: 9,
      });
      const db = sim.state.securityGroup('sg-0a000000000000001')!;
      expect(
        db.rules.map((r) => [r.isEgress, r.ipProtocol, r.fromPort, r.referencedGroupId ?? r.cidrIpv4]),
      ).toEqual([
        [false, 'tcp', 5432, 'sg-0b000000000000002'],
        [true, 'udp', 53, '10.0.0.0/16'],
      ]);
      // A group without declared egress keeps EC2's allow-all.
      expect(sim.state.securityGroup('sg-0b000000000000002')!.rules).toMatchObject([
        { isEgress: true, ipProtocol: '-1', cidrIpv4: '0.0.0.0/0' },
      ]);
    } finally {
      await sim.close();
    }
    expect(
      fails({
        ...declared,
        instanceTypes: [{ name: 'x', maximumNetworkInterfaces: 3, ipv4AddressesPerInterface: 10 }],
      }),
    ).toEqual({ code: 'SCENARIO_INVALID', path: 'instanceTypes[0].name' });
    expect(
      fails({
        ...declared,
        securityGroups: [
          {
            id: 'sg-0a000000000000001',
            name: 'db',
            ingress: [{ ipProtocol: 'tcp', referencedGroupId: 'sg-0f0000000000000ff' }],
          },
        ],
      }),
    ).toEqual({ code: 'SCENARIO_UNKNOWN_REFERENCE', path: 'securityGroups[0].ingress[0].referencedGroupId' });
    expect(
      fails({
        ...declared,
        securityGroups: [{ id: 'sg-0a000000000000001', name: 'db', ingress: [{ ipProtocol: 'tcp' }] }],
      }),
    ).toEqual({ code: 'SCENARIO_INVALID', path: 'securityGroups[0].ingress[0]' });
    await expect(
      startEc2Simulator({
        scenario: {
          ...declared,
          securityGroups: [
            {
              id: 'sg-0a000000000000001',
              name: 'db',
              ingress: [{ ipProtocol: 'tcp', cidrIpv4: '10.0.0.0/8' }],
            },
          ],
        },
      }),
    ).rejects.toMatchObject({ code: 'SCENARIO_INVALID', path: 'securityGroups[0].ingress' });
  });
});
