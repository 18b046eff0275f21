import { AttachNetworkInterfaceCommand, CreateNetworkInterfaceCommand } from '@aws-sdk/client-ec2';
import { MetadataService } from '@aws-sdk/ec2-metadata-service';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ec2Simulator } from '../src/index.js';
import { client, NODE, SUBNET_A, start } from './helpers.js';

// The AWS SDK's own IMDS client against the simulator: it PUTs a token before every GET and sends paths as
// `//latest/...`, so this checks both the token flow and the slash collapsing with the real thing.
describe('@aws-sdk/ec2-metadata-service against the simulated IMDS', () => {
  let sim: Ec2Simulator;
  beforeAll(async () => {
    sim = await start();
  });
  afterAll(async () => {
    await sim.close();
  });

  it('reads instance and per-MAC metadata with IMDSv2 tokens', async () => {
    const ec2 = client(sim);
    const eni = (
      await ec2.send(
        new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_A, SecondaryPrivateIpAddressCount: 2 }),
      )
    ).NetworkInterface!;
    await ec2.send(
      new AttachNetworkInterfaceCommand({
        NetworkInterfaceId: eni.NetworkInterfaceId!,
        InstanceId: NODE,
        DeviceIndex: 1,
      }),
    );
    ec2.destroy();
    const imds = new MetadataService({
      endpoint: sim.imdsEndpoint(NODE),
      ec2MetadataV1Disabled: true,
      retries: 0,
      httpOptions: { timeout: 5000 },
    });
    expect(await imds.request('/latest/meta-data/instance-id', {})).toBe(NODE);
    expect(await imds.request('/latest/meta-data/placement/availability-zone', {})).toBe('us-west-2a');
    const macs = (await imds.request('/latest/meta-data/network/interfaces/macs/', {})).split('\n');
    expect(macs).toContain(`${eni.MacAddress}/`);
    expect(
      await imds.request(`/latest/meta-data/network/interfaces/macs/${eni.MacAddress}/interface-id`, {}),
    ).toBe(eni.NetworkInterfaceId);
    expect(
      (
        await imds.request(`/latest/meta-data/network/interfaces/macs/${eni.MacAddress}/local-ipv4s`, {})
      ).split('\n'),
    ).toEqual(eni.PrivateIpAddresses!.map((a) => a.PrivateIpAddress));
  });

  it('one token reused for many GETs (disableFetchToken with the token header)', async () => {
    const base = sim.imdsEndpoint(NODE);
    const token = await new MetadataService({ endpoint: base, retries: 0 }).fetchMetadataToken();
    const reuse = new MetadataService({ endpoint: base, disableFetchToken: true, retries: 0 });
    for (let i = 0; i < 3; i++) {
      expect(
        await reuse.request('/latest/meta-data/instance-type', {
          headers: { 'x-aws-ec2-metadata-token': token },
        }),
      ).toBe('m5.large');
    }
  });

  it('without a token the GET is refused (401), and a missing path is a 404', async () => {
    const base = sim.imdsEndpoint(NODE);
    const noToken = new MetadataService({ endpoint: base, disableFetchToken: true, retries: 0 });
    const e = (await noToken.request('/latest/meta-data/instance-id', {}).catch((x: unknown) => x)) as {
      $metadata?: { httpStatusCode?: number };
    };
    expect(e.$metadata?.httpStatusCode).toBe(401);
    const withToken = new MetadataService({ endpoint: base, retries: 0 });
    const m = (await withToken.request('/latest/meta-data/nothing-here', {}).catch((x: unknown) => x)) as {
      $metadata?: { httpStatusCode?: number };
    };
    expect(m.$metadata?.httpStatusCode).toBe(404);
  });
});
