import { request } from 'node:http';
import {
  AssignIpv6AddressesCommand,
  AssignPrivateIpAddressesCommand,
  AttachNetworkInterfaceCommand,
  CreateNetworkInterfaceCommand,
  type EC2Client,
} from '@aws-sdk/client-ec2';
import { afterEach, describe, expect, it } from 'vitest';
import { type Ec2Simulator, ManualClock } from '../src/index.js';
import { client, NODE, NODE_BIG, SG_NODE, SG_POD, SUBNET_A, start } from './helpers.js';

let sim: Ec2Simulator | undefined;
let ec2: EC2Client | undefined;
afterEach(async () => {
  ec2?.destroy();
  await sim?.close();
  sim = undefined;
  ec2 = undefined;
});

/** A raw HTTP call, so paths like `//latest/...` reach the server unchanged. */
function raw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function token(base: string, ttl = '21600'): Promise<string> {
  const r = await raw(base, 'PUT', '/latest/api/token', { 'x-aws-ec2-metadata-token-ttl-seconds': ttl });
  expect(r.status).toBe(200);
  return r.body;
}

function reader(base: string, tok: string) {
  return async (path: string) =>
    raw(base, 'GET', `/latest/meta-data/${path}`, { 'x-aws-ec2-metadata-token': tok });
}

describe('IMDSv2 tokens', () => {
  it('requires a PUT token with a valid TTL and refuses GETs without one', async () => {
    const clock = new ManualClock();
    sim = await start({ clock });
    const base = sim.imdsEndpoint(NODE);
    expect((await raw(base, 'PUT', '/latest/api/token')).status).toBe(400);
    expect(
      (await raw(base, 'PUT', '/latest/api/token', { 'x-aws-ec2-metadata-token-ttl-seconds': '0' })).status,
    ).toBe(400);
    expect(
      (await raw(base, 'PUT', '/latest/api/token', { 'x-aws-ec2-metadata-token-ttl-seconds': '21601' }))
        .status,
    ).toBe(400);
    expect(
      (
        await raw(base, 'PUT', '/latest/api/token', {
          'x-aws-ec2-metadata-token-ttl-seconds': '60',
          'x-forwarded-for': '10.0.0.1',
        })
      ).status,
    ).toBe(403);
    expect((await raw(base, 'GET', '/latest/api/token')).status).toBe(405);
    expect((await raw(base, 'GET', '/latest/meta-data/instance-id')).status).toBe(401);
    expect(
      (await raw(base, 'GET', '/latest/meta-data/instance-id', { 'x-aws-ec2-metadata-token': 'forged' }))
        .status,
    ).toBe(401);
    const t = await token(base, '2');
    expect(await reader(base, t)('instance-id')).toEqual({ status: 200, body: NODE });
    clock.advance(1999);
    expect((await reader(base, t)('instance-id')).status).toBe(200);
    clock.advance(1);
    expect((await reader(base, t)('instance-id')).status).toBe(401);
  });

  it('collapses leading slashes, as the SDK metadata client sends //latest/...', async () => {
    sim = await start();
    const base = sim.imdsEndpoint(NODE);
    const r = await raw(base, 'PUT', '//latest/api/token', { 'x-aws-ec2-metadata-token-ttl-seconds': '60' });
    expect(r.status).toBe(200);
    const got = await raw(base, 'GET', '//latest/meta-data/instance-type', {
      'x-aws-ec2-metadata-token': r.body,
    });
    expect(got).toEqual({ status: 200, body: 'm5.large' });
  });
});

describe('IMDS paths', () => {
  it('serves the instance and per-MAC paths ipamd reads', async () => {
    sim = await start();
    ec2 = client(sim);
    const base = sim.imdsEndpoint(NODE);
    const get = reader(base, await token(base));
    const primary = sim.state.eni(sim.state.instance(NODE)!.primaryEniId)!;
    expect((await get('instance-id')).body).toBe(NODE);
    expect((await get('instance-type')).body).toBe('m5.large');
    expect((await get('placement/availability-zone')).body).toBe('us-west-2a');
    expect((await get('placement/region')).body).toBe('us-west-2');
    expect((await get('local-ipv4')).body).toBe('10.0.0.10');
    expect((await get('mac')).body).toBe(primary.mac);
    expect((await get('ipv6')).status).toBe(404);
    expect((await get('nope')).status).toBe(404);
    const listing = (await get('')).body.split('\n');
    expect(listing).toContain('instance-id');
    expect(listing).toContain('network/');
    expect(listing).toContain('placement/');

    const created = await ec2.send(
      new CreateNetworkInterfaceCommand({
        SubnetId: SUBNET_A,
        Groups: [SG_POD, SG_NODE],
        SecondaryPrivateIpAddressCount: 2,
      }),
    );
    const eni = created.NetworkInterface!;
    await ec2.send(
      new AttachNetworkInterfaceCommand({
        NetworkInterfaceId: eni.NetworkInterfaceId!,
        InstanceId: NODE,
        DeviceIndex: 1,
      }),
    );
    const pfx = await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: eni.NetworkInterfaceId!,
        Ipv4PrefixCount: 1,
      }),
    );
    const v6 = await ec2.send(
      new AssignIpv6AddressesCommand({ NetworkInterfaceId: eni.NetworkInterfaceId!, Ipv6AddressCount: 1 }),
    );
    const v6p = await ec2.send(
      new AssignIpv6AddressesCommand({ NetworkInterfaceId: eni.NetworkInterfaceId!, Ipv6PrefixCount: 1 }),
    );

    expect((await get('network/interfaces/macs/')).body).toBe(`${primary.mac}/\n${eni.MacAddress}/`);
    const m = (p: string) => get(`network/interfaces/macs/${eni.MacAddress}/${p}`);
    expect((await m('device-number')).body).toBe('1');
    expect((await m('interface-id')).body).toBe(eni.NetworkInterfaceId);
    expect((await m('local-ipv4s')).body).toBe(
      eni.PrivateIpAddresses!.map((a) => a.PrivateIpAddress).join('\n'),
    );
    expect((await m('local-ipv4s')).body.split('\n')[0]).toBe(eni.PrivateIpAddress);
    expect((await m('ipv4-prefix')).body).toBe(pfx.AssignedIpv4Prefixes![0]!.Ipv4Prefix);
    expect((await m('ipv6s')).body).toBe(v6.AssignedIpv6Addresses![0]);
    expect((await m('ipv6-prefix')).body).toBe(v6p.AssignedIpv6Prefixes![0]);
    expect((await m('subnet-id')).body).toBe(SUBNET_A);
    expect((await m('subnet-ipv4-cidr-block')).body).toBe('10.0.0.0/24');
    expect((await m('subnet-ipv6-cidr-blocks')).body).toBe('2600:1f14:abc:de00::/64');
    expect((await m('vpc-id')).body).toBe('vpc-0a000000000000001');
    expect((await m('vpc-ipv4-cidr-block')).body).toBe('10.0.0.0/16');
    expect((await m('vpc-ipv4-cidr-blocks')).body).toBe('10.0.0.0/16\n100.64.0.0/16');
    expect((await m('vpc-ipv6-cidr-blocks')).body).toBe('2600:1f14:abc:de00::/56');
    expect((await m('security-group-ids')).body).toBe(`${SG_POD}\n${SG_NODE}`);
    expect((await m('security-groups')).body).toBe('pods\nnode');
    expect((await m('network-card')).body).toBe('0');
    expect((await m('network-card-index')).body).toBe('0');
    expect((await m('mac')).body).toBe(eni.MacAddress);
    expect((await m('owner-id')).body).toBe('123456789012');
    const fields = (await m('')).body.split('\n');
    for (const f of [
      'device-number',
      'interface-id',
      'local-ipv4s',
      'ipv4-prefix',
      'ipv6s',
      'subnet-id',
      'vpc-ipv4-cidr-blocks',
    ]) {
      expect(fields).toContain(f);
    }
    // The primary ENI has neither prefixes nor IPv6: those keys are absent (404), as on EC2.
    const p = (x: string) => get(`network/interfaces/macs/${primary.mac}/${x}`);
    expect((await p('device-number')).body).toBe('0');
    expect((await p('ipv4-prefix')).status).toBe(404);
    expect((await p('ipv6s')).status).toBe(404);
    expect((await p('')).body.split('\n')).not.toContain('ipv4-prefix');

    const doc = await raw(base, 'GET', '/latest/dynamic/instance-identity/document', {
      'x-aws-ec2-metadata-token': await token(base),
    });
    expect(JSON.parse(doc.body)).toMatchObject({
      region: 'us-west-2',
      instanceId: NODE,
      instanceType: 'm5.large',
    });
  });

  it('reports the network card of a multi-card instance', async () => {
    sim = await start();
    ec2 = client(sim);
    const id = (await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_A }))).NetworkInterface!;
    await ec2.send(
      new AttachNetworkInterfaceCommand({
        NetworkInterfaceId: id.NetworkInterfaceId!,
        InstanceId: NODE_BIG,
        DeviceIndex: 0,
        NetworkCardIndex: 5,
      }),
    );
    const base = sim.imdsEndpoint(NODE_BIG);
    const get = reader(base, await token(base));
    expect((await get(`network/interfaces/macs/${id.MacAddress}/network-card`)).body).toBe('5');
    expect((await get(`network/interfaces/macs/${id.MacAddress}/device-number`)).body).toBe('0');
    expect((await get('instance-type')).body).toBe('p5.48xlarge');
  });
});

describe('IMDS lag', () => {
  it('reflects attaches and new addresses only after the IMDS delay', async () => {
    const clock = new ManualClock();
    sim = await start({ clock, timing: { imdsDelayMs: 1000 } });
    ec2 = client(sim);
    const base = sim.imdsEndpoint(NODE);
    const get = reader(base, await token(base));
    const eni = (await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_A }))).NetworkInterface!;
    await ec2.send(
      new AttachNetworkInterfaceCommand({
        NetworkInterfaceId: eni.NetworkInterfaceId!,
        InstanceId: NODE,
        DeviceIndex: 1,
      }),
    );
    expect((await get('network/interfaces/macs/')).body).not.toContain(eni.MacAddress!);
    expect((await get(`network/interfaces/macs/${eni.MacAddress}/local-ipv4s`)).status).toBe(404);
    clock.advance(1000);
    expect((await get('network/interfaces/macs/')).body).toContain(eni.MacAddress!);
    expect((await get(`network/interfaces/macs/${eni.MacAddress}/local-ipv4s`)).body).toBe(
      eni.PrivateIpAddress,
    );
    const r = await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: eni.NetworkInterfaceId!,
        SecondaryPrivateIpAddressCount: 2,
      }),
    );
    expect((await get(`network/interfaces/macs/${eni.MacAddress}/local-ipv4s`)).body).toBe(
      eni.PrivateIpAddress,
    );
    clock.advance(999);
    expect(
      (await get(`network/interfaces/macs/${eni.MacAddress}/local-ipv4s`)).body.split('\n'),
    ).toHaveLength(1);
    clock.advance(1);
    expect((await get(`network/interfaces/macs/${eni.MacAddress}/local-ipv4s`)).body.split('\n')).toEqual([
      eni.PrivateIpAddress,
      ...r.AssignedPrivateIpAddresses!.map((a) => a.PrivateIpAddress),
    ]);
  });
});
