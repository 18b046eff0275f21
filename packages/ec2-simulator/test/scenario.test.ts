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
});
