/**
 * `aws-node status` against a real introspection server over a real datastore: tables of ENIs, pods and the
 * pool; `--json`; one line and exit 1 when nothing answers; exit 2 on a bad command line.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Datastore } from '@vpc-cni-kit/datastore';
import { InMemoryCheckpointer, ManualClock } from '@vpc-cni-kit/datastore/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderFailures, renderStatus, runStatus } from '../src/cli/status.js';
import { formatTable } from '../src/cli/table.js';
import { loadConfig } from '../src/config/config.js';
import { FailureRing } from '../src/daemon/failures.js';
import { type HttpEndpoint, introspectionServer, listen } from '../src/daemon/http-servers.js';
import { silentLogger } from '../src/daemon/logger.js';

async function status(...argv: string[]) {
  return statusWith(argv, {});
}

async function statusWith(argv: string[], env: Record<string, string>) {
  let stdout = '';
  let stderr = '';
  const code = await runStatus(argv, env, {
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
  });
  return { code, stdout, stderr };
}

describe('aws-node status', () => {
  let endpoint: HttpEndpoint;

  beforeAll(async () => {
    const ds = new Datastore({
      clock: new ManualClock(),
      checkpointer: new InMemoryCheckpointer(),
      cooldownMs: 0,
    });
    ds.addEni({ id: 'eni-0a', deviceNumber: 0, routeTableId: 254, subnetId: 's', isPrimary: true });
    ds.addEni({ id: 'eni-0b', deviceNumber: 1, routeTableId: 2, subnetId: 's', isPrimary: false });
    for (let i = 0; i < 3; i++) ds.addCidr('eni-0a', `10.0.1.${10 + i}/32`);
    ds.addCidr('eni-0b', '10.0.2.16/32');
    ds.assign(
      { networkName: 'aws-cni', containerID: 'c1', ifName: 'eth0' },
      { namespace: 'web', name: 'front-1' },
    );
    ds.assign(
      { networkName: 'aws-cni', containerID: 'c2', ifName: 'eth0' },
      { namespace: 'web', name: 'front-2' },
    );
    let t = Date.UTC(2026, 10, 24, 5, 0, 0);
    const failures = new FailureRing(10, () => (t += 1000));
    failures.record({
      source: 'pool',
      action: 'create-eni',
      code: 'InsufficientFreeAddressesInSubnet',
      reason: 'subnet-1 has no free addresses',
    });
    failures.record({
      source: 'add-network',
      action: 'AddNetwork',
      code: 'PoolEmpty',
      reason: 'no address available',
      pod: 'web/front-3',
    });
    endpoint = await listen(
      introspectionServer(ds, loadConfig({ WARM_IP_TARGET: '5' }), silentLogger, {
        failures: () => failures.list(),
      }),
      '127.0.0.1:0',
    );
  });

  afterAll(async () => {
    await endpoint?.close();
  });

  it('prints ENIs, pods, the pool and the recent failures as tables', async () => {
    const o = await status('--address', endpoint.address);
    expect(o).toMatchObject({ code: 0, stderr: '' });
    const [enis, pods, pool, failures] = o.stdout.trim().split('\n\n');
    expect(enis?.split('\n')).toEqual([
      'ENIs',
      'CARD  ENI     PRIMARY  DEVICE  CIDRS  ASSIGNED  RANGES',
      '----  ------  -------  ------  -----  --------  --------------------------------------',
      expect.stringMatching(
        /^0 +eni-0a +yes +0 +3 +2\/3 +10\.0\.1\.10\/32 10\.0\.1\.11\/32 10\.0\.1\.12\/32$/,
      ),
      expect.stringMatching(/^0 +eni-0b +no +1 +1 +0\/1 +10\.0\.2\.16\/32$/),
    ]);
    expect(pods).toMatch(
      /^Pods\nPOD +ADDRESS +ENI +CIDR +SINCE\n[- ]+\nweb\/front-1 +10\.0\.1\.1\d +eni-0a +10\.0\.1\.1\d\/32 +\S+\nweb\/front-2 /,
    );
    expect(pool?.split('\n').slice(1)).toEqual([
      'ADDRESSES  ASSIGNED  FREE  PREFIXES  TARGETS',
      '---------  --------  ----  --------  ----------------------------------',
      '4          2         2     0         WARM_ENI_TARGET=1 WARM_IP_TARGET=5',
    ]);
    // Newest first, with the code and the reason.
    const lines = failures?.split('\n') ?? [];
    expect(lines[0]).toBe('Recent failures');
    expect(lines[1]).toMatch(/^TIME +SOURCE +ACTION +CODE +POD +REASON$/);
    expect(lines[3]).toMatch(
      /^2026-11-24T05:00:02\.000Z +add-network +AddNetwork +PoolEmpty +web\/front-3 +no address available$/,
    );
    expect(lines[4]).toMatch(
      /^2026-11-24T05:00:01\.000Z +pool +create-eni +InsufficientFreeAddressesInSubnet +subnet-1 has no free addresses$/,
    );
    expect(lines).toHaveLength(5);
  });

  it('a released address, listed with its history, is neither a pod nor assigned', () => {
    const at = (address: string, unassigned: string) => ({
      Address: address,
      IPAMMetadata: unassigned === '0001-01-01T00:00:00Z' ? { k8sPodNamespace: 'web', k8sPodName: 'a' } : {},
      AssignedTime: '2026-11-24T05:00:00.000Z',
      UnassignedTime: unassigned,
    });
    const text = renderStatus(
      {
        '0': {
          TotalIPs: 2,
          AssignedIPs: 1,
          ENIs: {
            'eni-0a': {
              ID: 'eni-0a',
              IsPrimary: true,
              DeviceNumber: 0,
              AvailableIPv4Cidrs: {
                '10.0.1.10/32': {
                  IsPrefix: false,
                  IPAddresses: { '10.0.1.10': at('10.0.1.10', '0001-01-01T00:00:00Z') },
                },
                '10.0.1.11/32': {
                  IsPrefix: false,
                  IPAddresses: { '10.0.1.11': at('10.0.1.11', '2026-11-24T05:01:00.000Z') },
                },
              },
            },
          },
        },
      },
      {},
    );
    const [enis, pods] = text.split('\n\n');
    expect(enis).toContain('1/2');
    expect(pods?.split('\n').slice(3)).toHaveLength(1);
    expect(pods).toContain('web/a');
    expect(pods).not.toContain('10.0.1.11');
  });

  it("IPv6 mode: lists the node's /80 and its pods", () => {
    const text = renderStatus(
      {
        '0': {
          TotalIPs: 2 ** 48,
          AssignedIPs: 1,
          ENIs: {
            'eni-0a': {
              ID: 'eni-0a',
              IsPrimary: true,
              DeviceNumber: 0,
              AvailableIPv4Cidrs: {},
              IPv6Cidrs: {
                '2001:db8:c00:1:1::/80': {
                  IsPrefix: true,
                  IPAddresses: {
                    '2001:db8:c00:1:1::': {
                      Address: '2001:db8:c00:1:1::',
                      IPAMMetadata: { k8sPodNamespace: 'web', k8sPodName: 'v6' },
                      AssignedTime: '2026-11-24T05:00:00.000Z',
                      UnassignedTime: '0001-01-01T00:00:00Z',
                    },
                  },
                },
              },
            },
          },
        },
      },
      {},
    );
    const [enis, pods, pool] = text.split('\n\n');
    expect(enis).toContain(`1/${2 ** 48}`);
    expect(enis).toContain('2001:db8:c00:1:1::/80');
    expect(pods).toMatch(/web\/v6 +2001:db8:c00:1:1:: +eni-0a +2001:db8:c00:1:1::\/80/);
    expect(pool?.split('\n')[3]).toMatch(/^281474976710656 +1 +281474976710655 +1/);
  });

  it('says so when there was no failure', () => {
    expect(renderFailures([])).toBe('Recent failures\n(none)');
  });

  it('--json gives the introspection documents', async () => {
    const o = await status('--json', `--address=${endpoint.address}`);
    expect(o.code).toBe(0);
    const doc = JSON.parse(o.stdout) as {
      enis: Record<string, { AssignedIPs: number }>;
      settings: unknown;
      failures: { code: string }[];
    };
    expect(doc.enis['0']?.AssignedIPs).toBe(2);
    expect(doc.settings).toMatchObject({ WARM_IP_TARGET: 5 });
    expect(doc.failures.map((f) => f.code)).toEqual(['PoolEmpty', 'InsufficientFreeAddressesInSubnet']);
  });

  it('one line and exit 1 when no daemon answers', async () => {
    const down = await status('--address', '127.0.0.1:1');
    expect(down.code).toBe(1);
    expect(down.stdout).toBe('');
    expect(down.stderr).toMatch(
      /^aws-node status: cannot read the daemon's introspection at 127\.0\.0\.1:1 \(.*ECONNREFUSED.*\): is aws-node running/,
    );
    expect(down.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('refuses an address it cannot connect to, port 0 included, as a usage error in one line', async () => {
    for (const [argv, env, shown] of [
      [['--address', 'nonsense'], {}, '--address "nonsense"'],
      [['--address', '127.0.0.1:0'], {}, '--address "127.0.0.1:0"'],
      [[], { INTROSPECTION_BIND_ADDRESS: ':0' }, 'INTROSPECTION_BIND_ADDRESS ":0"'],
      [['--address', 'unix:relative.sock'], {}, '--address "unix:relative.sock"'],
    ] as const) {
      const o = await statusWith([...argv], env);
      expect(o.code, shown).toBe(2);
      expect(o.stdout).toBe('');
      expect(o.stderr.startsWith(`aws-node status: ${shown}: `), o.stderr).toBe(true);
      expect(o.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect((await status('--address', '127.0.0.1:0')).stderr).toMatch(/port 0 is "any free port"/);
  });

  it('--version prints the version as `aws-node --version` does', async () => {
    expect(await statusWith(['--version'], { VPC_CNI_VERSION: 'v1.23.0' })).toEqual({
      code: 0,
      stdout: 'aws-node v1.23.0\n',
      stderr: '',
    });
    expect((await status('-v')).stdout).toMatch(/^aws-node \S+\n$/);
  });

  it('refuses an unknown option with exit 2', async () => {
    const bad = await status('--tables');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^aws-node status: Unknown option '--tables'/);
  });

  it('one line and exit 1 when the endpoint answers JSON of another shape', async () => {
    const other = createServer((_req, res) => res.end('null'));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    try {
      const { port } = other.address() as AddressInfo;
      const o = await status('--address', `127.0.0.1:${port}`);
      expect(o.code).toBe(1);
      expect(o.stdout).toBe('');
      expect(o.stderr).toMatch(
        /^aws-node status: 127\.0\.0\.1:\d+ answered JSON that is not aws-node's introspection/,
      );
      expect(o.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      await new Promise((r) => other.close(r));
    }
  });

  it('gives up within its 3 s deadline, or at its size cap, on an endpoint that never finishes its answer', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'status-stream-'));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    // One endpoint floods a 200 body that never ends, one trickles a byte at a time: neither is the daemon.
    const flood = createServer((_req, res) => {
      res.writeHead(200);
      const pump = () => {
        while (res.write(chunk));
      };
      res.on('drain', pump);
      pump();
    });
    const timers = new Set<NodeJS.Timeout>();
    const trickle = createServer((_req, res) => {
      res.writeHead(200);
      const t = setInterval(() => res.write(' '), 50);
      timers.add(t);
      res.on('close', () => clearInterval(t));
    });
    await new Promise<void>((r) => flood.listen(join(dir, 'flood.sock'), r));
    await new Promise<void>((r) => trickle.listen(join(dir, 'trickle.sock'), r));
    try {
      let started = Date.now();
      const flooded = await status('--address', `unix:${join(dir, 'flood.sock')}`);
      // The cap, not the deadline, ended it (the message says which); bounds are loose for a loaded machine.
      expect(Date.now() - started).toBeLessThan(6000);
      expect(flooded.code).toBe(1);
      expect(flooded.stderr).toMatch(/^aws-node status: cannot read .*answered more than 8388608 bytes/);
      expect(flooded.stderr.trim().split('\n')).toHaveLength(1);
      started = Date.now();
      const trickled = await status('--address', `unix:${join(dir, 'trickle.sock')}`);
      expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
      expect(Date.now() - started).toBeLessThan(6000);
      expect(trickled.code).toBe(1);
      expect(trickled.stderr).toMatch(/^aws-node status: cannot read .*no complete answer within 3000 ms/);
      expect(trickled.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      for (const t of timers) clearInterval(t);
      flood.closeAllConnections();
      trickle.closeAllConnections();
      await new Promise((r) => flood.close(r));
      await new Promise((r) => trickle.close(r));
      await rm(dir, { recursive: true, force: true });
    }
  }, 15_000);

  it('formatTable pads columns and underlines the header', () => {
    expect(
      formatTable([
        ['A', 'BB'],
        ['ccc', 'd'],
      ]),
    ).toBe('A    BB\n---  --\nccc  d');
  });
});

describe('aws-node status with security groups for pods', () => {
  it('shows each branch pod with its VLAN, branch ENI and trunk', async () => {
    const ds = new Datastore({
      clock: new ManualClock(),
      checkpointer: new InMemoryCheckpointer(),
      cooldownMs: 0,
    });
    const config = loadConfig({
      ENABLE_POD_ENI: 'true',
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      MY_NODE_NAME: 'ip-10-0-0-5.us-west-2.compute.internal',
    });
    const pods = [
      { name: 'db-client-1', vlanId: 7, address: '10.0.4.9', branchEniId: 'eni-0b7' },
      { name: 'db-client-0', vlanId: 3, address: '10.0.4.8', branchEniId: 'eni-0b3' },
    ].map((p) => ({
      ...p,
      namespace: 'shop',
      trunkEniId: 'eni-0tr',
      trunkInterface: 'eth2',
      hostVeth: `vlan${p.vlanId}`,
      mode: 'strict',
    }));
    const endpoint = await listen(
      introspectionServer(ds, config, silentLogger, { branchPods: async () => pods }),
      '127.0.0.1:0',
    );
    try {
      let stdout = '';
      const code = await runStatus(
        ['--address', endpoint.address],
        {},
        { stdout: (s) => void (stdout += s), stderr: () => {} },
      );
      expect(code).toBe(0);
      const table = stdout.split('\n\n').find((t) => t.startsWith('Branch pods'))!;
      // Header, underline, then the pods by VLAN.
      expect(
        table
          .split('\n')
          .slice(3)
          .map((l) => l.trim().split(/\s+/)),
      ).toEqual([
        ['shop/db-client-0', '10.0.4.8', '3', 'eni-0b3', 'eni-0tr', '(eth2)', 'strict', 'vlan3'],
        ['shop/db-client-1', '10.0.4.9', '7', 'eni-0b7', 'eni-0tr', '(eth2)', 'strict', 'vlan7'],
      ]);
    } finally {
      await endpoint.close();
    }
  });
});
