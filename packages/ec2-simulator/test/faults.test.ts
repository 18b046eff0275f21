import {
  AssignPrivateIpAddressesCommand,
  AttachNetworkInterfaceCommand,
  CreateNetworkInterfaceCommand,
  CreateTagsCommand,
  DeleteNetworkInterfaceCommand,
  DescribeNetworkInterfacesCommand,
  DetachNetworkInterfaceCommand,
  type EC2Client,
  UnassignPrivateIpAddressesCommand,
} from '@aws-sdk/client-ec2';
import { afterEach, describe, expect, it } from 'vitest';
import { AWS_RATE_LIMITS, type Ec2Simulator, ManualClock, type SimEvent } from '../src/index.js';
import { client, errorOf, NODE, SUBNET_A, SUBNET_B, start } from './helpers.js';

let sim: Ec2Simulator | undefined;
let ec2: EC2Client | undefined;
afterEach(async () => {
  ec2?.destroy();
  await sim?.close();
  sim = undefined;
  ec2 = undefined;
});

async function boot(opts: Parameters<typeof start>[0] = {}, maxAttempts = 3) {
  sim = await start(opts);
  ec2 = client(sim, maxAttempts);
  return { sim, ec2 };
}

const newEni = async (c: EC2Client, subnet = SUBNET_A) =>
  (await c.send(new CreateNetworkInterfaceCommand({ SubnetId: subnet }))).NetworkInterface!
    .NetworkInterfaceId!;

async function imdsGet(s: Ec2Simulator, path: string): Promise<{ status: number; body: string }> {
  const base = s.imdsEndpoint(NODE);
  const token = await (
    await fetch(`${base}/latest/api/token`, {
      method: 'PUT',
      headers: { 'x-aws-ec2-metadata-token-ttl-seconds': '300' },
    })
  ).text();
  const r = await fetch(`${base}${path}`, { headers: { 'x-aws-ec2-metadata-token': token } });
  return { status: r.status, body: await r.text() };
}

describe('call faults', () => {
  it('throttles the next N calls of one action only', async () => {
    const { sim, ec2 } = await boot({}, 1);
    sim.faults.throttleNext(2, 'CreateNetworkInterface');
    const first = await errorOf(newEni(ec2));
    expect(first.name).toBe('RequestLimitExceeded');
    expect(first.status).toBe(503);
    const d = await ec2.send(new DescribeNetworkInterfacesCommand({}));
    expect(d.NetworkInterfaces!.length).toBeGreaterThan(0);
    expect((await errorOf(newEni(ec2))).name).toBe('RequestLimitExceeded');
    expect(await newEni(ec2)).toMatch(/^eni-/);
  });

  it('fails the next call of an action with a chosen code and status', async () => {
    const { sim, ec2 } = await boot({}, 1);
    const id = await newEni(ec2);
    sim.faults.failNext('AttachNetworkInterface', 'AttachmentLimitExceeded', { message: 'injected' });
    const e = await errorOf(
      ec2.send(
        new AttachNetworkInterfaceCommand({ NetworkInterfaceId: id, InstanceId: NODE, DeviceIndex: 1 }),
      ),
    );
    expect(e.name).toBe('AttachmentLimitExceeded');
    expect(e.message).toBe('injected');
    expect(e.status).toBe(400);
    expect(sim.state.eni(id)!.attachment).toBeUndefined();
    await ec2.send(
      new AttachNetworkInterfaceCommand({ NetworkInterfaceId: id, InstanceId: NODE, DeviceIndex: 1 }),
    );
    expect(sim.state.eni(id)!.attachment!.deviceIndex).toBe(1);
  });

  it('a lost response (afterApply): the SDK retries CreateNetworkInterface with the same ClientToken, no duplicate', async () => {
    const { sim, ec2 } = await boot({}, 3);
    sim.faults.failNext('CreateNetworkInterface', 'InternalError', { afterApply: true });
    const before = sim.state.enis().length;
    const id = await newEni(ec2);
    expect(sim.state.enis().length).toBe(before + 1);
    expect(sim.calls.map((c) => [c.action, c.status])).toEqual([
      ['CreateNetworkInterface', 500],
      ['CreateNetworkInterface', 200],
    ]);
    expect(sim.state.eni(id)).toBeDefined();
  });

  it('an injected 500 InternalError is retried by the SDK', async () => {
    const { sim, ec2 } = await boot({}, 3);
    sim.faults.failNext('DescribeNetworkInterfaces', 'InternalError', { count: 2 });
    const out = await ec2.send(new DescribeNetworkInterfacesCommand({}));
    expect(out.$metadata.attempts).toBe(3);
    expect(sim.calls.map((c) => c.status)).toEqual([500, 500, 200]);
  });

  it('latency holds a call until the injected clock has advanced', async () => {
    const clock = new ManualClock();
    const { sim, ec2 } = await boot({ clock });
    sim.faults.add({ kind: 'latency', ms: 5000, action: 'DescribeNetworkInterfaces' });
    let done = false;
    const p = ec2.send(new DescribeNetworkInterfacesCommand({})).then((r) => {
      done = true;
      return r;
    });
    for (let i = 0; i < 20 && sim.calls.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false);
    expect(sim.calls).toHaveLength(0);
    while (!done) {
      clock.advance(5000);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect((await p).NetworkInterfaces!.length).toBe(2);
  });

  it('IAM deny list from options: UnauthorizedOperation naming the action, nothing changed', async () => {
    const { sim, ec2 } = await boot({ iamDeny: ['ec2:AssignPrivateIpAddresses'] });
    const id = await newEni(ec2);
    const e = await errorOf(
      ec2.send(
        new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: id, SecondaryPrivateIpAddressCount: 1 }),
      ),
    );
    expect(e.name).toBe('UnauthorizedOperation');
    expect(e.status).toBe(403);
    expect(e.message).toContain('is not authorized to perform: ec2:AssignPrivateIpAddresses');
    expect(sim.state.eni(id)!.privateIps).toHaveLength(1);
  });
});

describe('token buckets (AWS limits, injected clock)', () => {
  it('CreateTags: burst of 100, then RequestLimitExceeded, refilled at 10/s', async () => {
    const clock = new ManualClock();
    const { sim, ec2 } = await boot({ clock, rateLimits: AWS_RATE_LIMITS }, 1);
    const id = sim.state.instance(NODE)!.primaryEniId;
    const tag = () => ec2.send(new CreateTagsCommand({ Resources: [id], Tags: [{ Key: 'k', Value: 'v' }] }));
    for (let i = 0; i < 100; i++) await tag();
    const e = await errorOf(tag());
    expect(e.name).toBe('RequestLimitExceeded');
    expect(e.status).toBe(503);
    // Other families have their own buckets.
    await ec2.send(
      new DescribeNetworkInterfacesCommand({
        Filters: [{ Name: 'vpc-id', Values: ['vpc-0a000000000000001'] }],
      }),
    );
    clock.advance(100);
    await tag();
    expect((await errorOf(tag())).name).toBe('RequestLimitExceeded');
  });

  it('unfiltered, unpaginated DescribeNetworkInterfaces draws from the 50-token bucket', async () => {
    const clock = new ManualClock();
    const { ec2 } = await boot({ clock, rateLimits: AWS_RATE_LIMITS }, 1);
    for (let i = 0; i < 50; i++) await ec2.send(new DescribeNetworkInterfacesCommand({}));
    expect((await errorOf(ec2.send(new DescribeNetworkInterfacesCommand({})))).name).toBe(
      'RequestLimitExceeded',
    );
    const paged = await ec2.send(new DescribeNetworkInterfacesCommand({ MaxResults: 5 }));
    expect(paged.NetworkInterfaces).toHaveLength(2);
  });
});

describe('timing faults (injected clock)', () => {
  it('eventual consistency hides a new ENI and new addresses from Describe* for T ms', async () => {
    const clock = new ManualClock();
    const { sim, ec2 } = await boot({ clock });
    sim.faults.add({ kind: 'eventual-consistency', ms: 2000 });
    const id = await newEni(ec2);
    const hidden = await errorOf(
      ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] })),
    );
    expect(hidden.name).toBe('InvalidNetworkInterfaceID.NotFound');
    const listed = await ec2.send(
      new DescribeNetworkInterfacesCommand({ Filters: [{ Name: 'status', Values: ['available'] }] }),
    );
    expect(listed.NetworkInterfaces).toEqual([]);
    clock.advance(2000);
    const seen = await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] }));
    expect(seen.NetworkInterfaces![0]!.NetworkInterfaceId).toBe(id);
    await ec2.send(
      new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: id, SecondaryPrivateIpAddressCount: 2 }),
    );
    const before = (await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] })))
      .NetworkInterfaces![0]!;
    expect(before.PrivateIpAddresses).toHaveLength(1);
    clock.advance(2000);
    const after = (await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] })))
      .NetworkInterfaces![0]!;
    expect(after.PrivateIpAddresses).toHaveLength(3);
  });

  it('eventual consistency with scope "all": attaching a just-created ENI is NotFound until visible', async () => {
    const clock = new ManualClock();
    const { sim, ec2 } = await boot({ clock }, 1);
    sim.faults.add({ kind: 'eventual-consistency', ms: 1000, scope: 'all' });
    const id = await newEni(ec2);
    const attach = () =>
      ec2.send(
        new AttachNetworkInterfaceCommand({ NetworkInterfaceId: id, InstanceId: NODE, DeviceIndex: 1 }),
      );
    expect((await errorOf(attach())).name).toBe('InvalidNetworkInterfaceID.NotFound');
    expect(sim.state.eni(id)!.attachment).toBeUndefined();
    clock.advance(1000);
    await attach();
    expect(sim.state.eni(id)!.attachment!.deviceIndex).toBe(1);
    const bad = await fetch(`${sim.adminEndpoint}/faults`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'eventual-consistency', ms: 5, scope: 'sometimes' }),
    });
    expect(bad.status).toBe(400);
  });

  it('slow attach: "attaching" and absent from IMDS until the delay passes', async () => {
    const clock = new ManualClock();
    const { sim, ec2 } = await boot({ clock });
    sim.faults.add({ kind: 'slow-attach', ms: 1500 });
    const id = await newEni(ec2);
    await ec2.send(
      new AttachNetworkInterfaceCommand({ NetworkInterfaceId: id, InstanceId: NODE, DeviceIndex: 1 }),
    );
    const mac = sim.state.eni(id)!.mac;
    const d = (await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] })))
      .NetworkInterfaces![0]!;
    expect(d.Status).toBe('in-use');
    expect(d.Attachment!.Status).toBe('attaching');
    expect((await imdsGet(sim, '/latest/meta-data/network/interfaces/macs/')).body).not.toContain(mac);
    clock.advance(1500);
    const e = (await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] })))
      .NetworkInterfaces![0]!;
    expect(e.Attachment!.Status).toBe('attached');
    expect((await imdsGet(sim, '/latest/meta-data/network/interfaces/macs/')).body).toContain(`${mac}/`);
  });

  it('slow detach: "detaching", Delete is InvalidNetworkInterface.InUse, then available', async () => {
    const clock = new ManualClock();
    const { sim, ec2 } = await boot({ clock });
    const id = await newEni(ec2);
    const att = await ec2.send(
      new AttachNetworkInterfaceCommand({ NetworkInterfaceId: id, InstanceId: NODE, DeviceIndex: 1 }),
    );
    sim.faults.add({ kind: 'slow-detach', ms: 3000 });
    await ec2.send(new DetachNetworkInterfaceCommand({ AttachmentId: att.AttachmentId! }));
    const d = (await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] })))
      .NetworkInterfaces![0]!;
    expect(d.Attachment!.Status).toBe('detaching');
    expect(d.Status).toBe('in-use');
    expect(
      (await errorOf(ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: id })))).name,
    ).toBe('InvalidNetworkInterface.InUse');
    const detached: string[] = [];
    sim.subscribe((e) => {
      if (e.type === 'eni-detached') detached.push(e.eniId);
    });
    clock.advance(3000);
    await new Promise((r) => setImmediate(r));
    expect(detached).toEqual([id]);
    await ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: id }));
    expect(sim.state.eni(id)).toBeUndefined();
  });
});

describe('admin endpoint', () => {
  it('adds faults, dumps state and calls, clears faults', async () => {
    const { sim, ec2 } = await boot({}, 1);
    const post = (body: unknown) =>
      fetch(`${sim.adminEndpoint}/faults`, { method: 'POST', body: JSON.stringify(body) });
    expect(
      (
        await post([
          { kind: 'throttle', count: 1, action: 'CreateNetworkInterface' },
          { kind: 'iam-deny', actions: ['DeleteNetworkInterface'] },
        ])
      ).status,
    ).toBe(204);
    expect((await errorOf(newEni(ec2))).name).toBe('RequestLimitExceeded');
    const id = await newEni(ec2);
    expect(
      (await errorOf(ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: id })))).name,
    ).toBe('UnauthorizedOperation');
    const bad = await post({ kind: 'throttle', count: -1 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('FAULT_INVALID');
    const notJson = await fetch(`${sim.adminEndpoint}/faults`, { method: 'POST', body: '{' });
    expect(notJson.status).toBe(400);
    const state = (await (await fetch(`${sim.adminEndpoint}/state`)).json()) as {
      state: { networkInterfaces: { id: string; status: string }[] };
      faults: { iamDeny: string[] };
      endpoints: { ec2: string; imds: Record<string, string> };
    };
    expect(state.state.networkInterfaces.find((n) => n.id === id)!.status).toBe('available');
    expect(state.faults.iamDeny).toEqual(['ec2:DeleteNetworkInterface']);
    expect(state.endpoints.ec2).toBe(sim.endpoint);
    expect(state.endpoints.imds[NODE]).toBe(sim.imdsEndpoint(NODE));
    const calls = (await (await fetch(`${sim.adminEndpoint}/calls`)).json()) as {
      action: string;
      errorCode?: string;
    }[];
    expect(calls.map((c) => [c.action, c.errorCode])).toEqual([
      ['CreateNetworkInterface', 'RequestLimitExceeded'],
      ['CreateNetworkInterface', undefined],
      ['DeleteNetworkInterface', 'UnauthorizedOperation'],
    ]);
    expect((await fetch(`${sim.adminEndpoint}/faults`, { method: 'DELETE' })).status).toBe(204);
    await ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: id }));
    expect((await fetch(`${sim.adminEndpoint}/nope`)).status).toBe(404);
  });
});

describe('state events', () => {
  it('reports create, attach, assign, unassign, detach and delete in order', async () => {
    const { sim, ec2 } = await boot();
    const events: SimEvent[] = [];
    const stop = sim.subscribe((e) => events.push(e));
    const id = await newEni(ec2, SUBNET_B);
    const att = await ec2.send(
      new AttachNetworkInterfaceCommand({ NetworkInterfaceId: id, InstanceId: NODE, DeviceIndex: 1 }),
    );
    const r = await ec2.send(
      new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: id, Ipv4PrefixCount: 1 }),
    );
    const prefix = r.AssignedIpv4Prefixes![0]!.Ipv4Prefix!;
    await ec2.send(new UnassignPrivateIpAddressesCommand({ NetworkInterfaceId: id, Ipv4Prefixes: [prefix] }));
    await ec2.send(new DetachNetworkInterfaceCommand({ AttachmentId: att.AttachmentId! }));
    await ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: id }));
    stop();
    await newEni(ec2);
    const mac = events[0]!.type === 'eni-created' ? events[0]!.mac : '';
    expect(events).toEqual([
      {
        type: 'eni-created',
        eniId: id,
        subnetId: SUBNET_B,
        vpcId: 'vpc-0a000000000000001',
        mac,
        interfaceType: 'interface',
        addresses: { ipv4: ['100.64.0.4'], ipv4Prefixes: [], ipv6: [], ipv6Prefixes: [] },
      },
      {
        type: 'eni-attached',
        eniId: id,
        instanceId: NODE,
        attachmentId: att.AttachmentId,
        deviceIndex: 1,
        networkCardIndex: 0,
        mac,
      },
      {
        type: 'addresses-assigned',
        eniId: id,
        addresses: { ipv4: [], ipv4Prefixes: [prefix], ipv6: [], ipv6Prefixes: [] },
      },
      {
        type: 'addresses-unassigned',
        eniId: id,
        addresses: { ipv4: [], ipv4Prefixes: [prefix], ipv6: [], ipv6Prefixes: [] },
      },
      { type: 'eni-detached', eniId: id, instanceId: NODE, attachmentId: att.AttachmentId, mac },
      {
        type: 'eni-deleted',
        eniId: id,
        mac,
        addresses: { ipv4: ['100.64.0.4'], ipv4Prefixes: [], ipv6: [], ipv6Prefixes: [] },
      },
    ]);
  });

  it('a listener that throws does not fail the call', async () => {
    const errors: unknown[] = [];
    const { sim, ec2 } = await boot({ onListenerError: (e) => errors.push(e) });
    sim.subscribe(() => {
      throw new Error('listener bug');
    });
    expect(await newEni(ec2)).toMatch(/^eni-/);
    expect(errors).toHaveLength(1);
  });
});
