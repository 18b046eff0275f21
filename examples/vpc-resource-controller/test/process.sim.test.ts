import { type ChildProcess, spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePodEniAnnotation } from '@vpc-cni-kit/sgp-branch';
import { eventually, fifoWithLateWriter, scratchDir } from '@vpc-cni-kit/testkit';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startWorld, type World } from './support/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is not built: run npx turbo run build first`);
});

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((r) => child.once('exit', (code) => r(code)));
}

/** Every branch ENI in EC2 belongs to a live pod annotated with it, and each annotation names an associated ENI. */
function consistent(w: World): boolean {
  const pods = (
    w.kube.objects.list('v1', 'pods', 'default') as { metadata: { uid: string; name: string } }[]
  ).map((p) => p.metadata);
  const annotated = new Map<string, string>();
  for (const p of pods) {
    const text = w.annotation(p.name);
    if (text !== undefined) annotated.set(parsePodEniAnnotation(text, { family: 4 }).eniId, p.uid);
  }
  const assoc = new Set(w.ec2.state.trunkAssociations().map((a) => a.branchEniId));
  for (const b of w.branches()) if (annotated.get(b.id) !== b.podUid || !assoc.has(b.id)) return false;
  return [...annotated.keys()].every((id) => assoc.has(id));
}

describe('the vpc-resource-controller program', () => {
  it('answers --help and --version, refuses unknown options and a missing cluster name (exit 2)', () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 20_000 });
    const help = run('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: vpc-resource-controller /);
    const version = run('--version');
    expect(version.status).toBe(0);
    expect(version.stdout).toMatch(/^vpc-resource-controller \d+\.\d+\.\d+/);
    const bogus = run('--bogus');
    expect(bogus.status).toBe(2);
    expect(bogus.stderr).toMatch(/^vpc-resource-controller: Unknown option '--bogus'\n/);
    const noName = run('--region', 'us-west-2');
    expect(noName.status).toBe(2);
    expect(noName.stderr).toMatch(/^vpc-resource-controller: --cluster-name is required\n/);
  });

  it('fails in one line with a hint when the API server does not answer', () => {
    const r = spawnSync(
      process.execPath,
      [BIN, '--cluster-name', 'c', '--region', 'us-west-2', '--kubeconfig', '/nonexistent/kubeconfig'],
      { encoding: 'utf8', timeout: 20_000 },
    );
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /cannot load the Kubernetes configuration from \/nonexistent\/kubeconfig.*\(hint: /,
    );

    // An API server that refuses connections: one line, at once.
    const dir = scratchDir('vpc-rc-');
    try {
      const kubeconfig = join(dir.path, 'kubeconfig');
      writeFileSync(
        kubeconfig,
        'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n',
      );
      const down = spawnSync(
        process.execPath,
        [BIN, '--cluster-name', 'c', '--region', 'us-west-2', '--kubeconfig', kubeconfig],
        { encoding: 'utf8', timeout: 20_000 },
      );
      expect(down.status).toBe(1);
      expect(down.stderr.trim().split('\n')).toHaveLength(1);
      expect(down.stderr).toMatch(
        /the Kubernetes API server https:\/\/127\.0\.0\.1:1 is not reachable: .*\(hint: /,
      );
    } finally {
      dir.remove();
    }
  });

  it('a FIFO swapped in for its CA file while it runs: it keeps answering probes and serving pods', async () => {
    world = await startWorld();
    const w = world;
    w.policy();
    const ca = join(w.scratchPath, 'ca.pem');
    writeFileSync(ca, w.kube.caPem!);
    const kubeconfig = join(w.scratchPath, 'kubeconfig-ca-file');
    writeFileSync(
      kubeconfig,
      w.kube.kubeconfig().replace(/certificate-authority-data: \S+/, `certificate-authority: ${ca}`),
    );
    const run = w.spawnBin(['--health-probe-bind-address', '127.0.0.1:0'], { kubeconfig });
    const probes = await eventually(
      'the probes',
      () => run.log.find((l) => l.includes('"serving health probes"')),
      20_000,
    );
    const port = (JSON.parse(probes) as { port: number }).port;
    await eventually(
      'trunks',
      () => w.ec2.state.enis().filter((e) => e.interfaceType === 'trunk').length === 2,
      20_000,
    );
    // The client read the CA at every request with readFileSync: the process froze at the next one.
    rmSync(ca);
    const fifo = fifoWithLateWriter(ca, 60_000);
    try {
      w.pod('client-1', 'node-1', { app: 'db-client' });
      await eventually('the pod annotated', () => w.annotation('client-1'), 15_000);
      const healthz = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) });
      expect(healthz.status).toBe(200);
      expect(run.child.exitCode).toBeNull();
    } finally {
      fifo.stop();
    }
    run.child.kill('SIGTERM');
    expect(await exited(run.child)).toBe(0);
  });

  it('killed (SIGKILL) mid-churn and restarted, it leaks no branch ENI and serves every pod', async () => {
    world = await startWorld();
    world.policy();
    // Slow EC2 down so the kill lands between creates and associations.
    world.ec2.faults.add({ kind: 'latency', ms: 40, action: 'AssociateTrunkInterface' });
    world.ec2.faults.add({ kind: 'latency', ms: 40, action: 'CreateNetworkInterface' });
    const first = world.spawnBin(['--branch-eni-cooldown', '1s']);
    await eventually(
      'trunks',
      () => world!.ec2.state.enis().filter((e) => e.interfaceType === 'trunk').length === 2,
      20_000,
    );
    for (let i = 0; i < 12; i++) world.pod(`client-${i}`, i % 2 ? 'node-1' : 'node-2', { app: 'db-client' });
    await eventually('some branches made', () => world!.branches().length >= 4, 20_000);
    first.child.kill('SIGKILL');
    expect(await exited(first.child)).toBeNull();
    // While it is down: some pods go away, some come.
    for (let i = 0; i < 12; i += 3) world.kube.objects.delete('v1', 'pods', `client-${i}`, 'default');
    for (let i = 12; i < 15; i++) world.pod(`client-${i}`, 'node-1', { app: 'db-client' });

    const second = world.spawnBin(['--branch-eni-cooldown', '1s']);
    const live = (world.kube.objects.list('v1', 'pods', 'default') as { metadata: { name: string } }[]).map(
      (p) => p.metadata.name,
    );
    await eventually(
      'live pods annotated, the rest cleaned up',
      () => live.every((n) => world!.annotation(n)) && consistent(world!),
      30_000,
    );
    // Exactly one trunk per node (the restart found the existing ones).
    expect(world.ec2.state.enis().filter((e) => e.interfaceType === 'trunk')).toHaveLength(2);
    for (const n of live) world.kube.objects.delete('v1', 'pods', n, 'default');
    await eventually(
      'no branch left',
      () => world!.branches().length === 0 && world!.ec2.state.trunkAssociations().length === 0,
      30_000,
    );
    second.child.kill('SIGTERM');
    expect(await exited(second.child)).toBe(0);
  });

  it('a leader that cannot renew its Lease within the deadline exits 1 with one line (it never acts beside a new one)', async () => {
    world = await startWorld();
    const run = world.spawnBin([
      ...['--leader-elect', '--lease-duration', '2s', '--renew-deadline', '1s', '--retry-period', '200ms'],
    ]);
    await eventually('leader', () => run.log.some((l) => l.includes('"became the leader"')), 20_000);
    world.kube.faults.setUnavailable(true);
    expect(await exited(run.child)).toBe(1);
    const stderr = run.stderr.join('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(
      /^vpc-resource-controller: lost the leader lease: no renewal of the lease for 1000 ms \(hint: /,
    );
  });

  it('serves /healthz and /readyz with --health-probe-bind-address', async () => {
    world = await startWorld();
    const run = world.spawnBin(['--health-probe-bind-address', '127.0.0.1:0']);
    const line = await eventually(
      'probes served',
      () => run.log.find((l) => l.includes('"serving health probes"')),
      20_000,
    );
    const { port } = JSON.parse(line) as { port: number };
    const get = async (path: string) => {
      const r = await fetch(`http://127.0.0.1:${port}${path}`);
      return [r.status, (await r.text()).trim()] as const;
    };
    expect(await get('/healthz')).toEqual([200, 'ok']);
    let ready: readonly [number, string] = [0, ''];
    for (let i = 0; i < 100 && ready[0] !== 200; i++) {
      ready = await get('/readyz');
      if (ready[0] !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ready).toEqual([200, 'ok']);
    expect((await get('/metrics'))[0]).toBe(404);
    run.child.kill('SIGTERM');
    expect(await exited(run.child)).toBe(0);
  });

  it('two replicas with --leader-elect: one acts; when it dies the other takes over', async () => {
    world = await startWorld();
    world.policy();
    const timing = [
      '--leader-elect',
      '--lease-duration',
      '2s',
      '--renew-deadline',
      '1500ms',
      '--retry-period',
      '300ms',
    ];
    const a = world.spawnBin([
      ...timing,
      '--leader-election-identity',
      'replica-a',
      '--branch-eni-cooldown',
      '1s',
    ]);
    const b = world.spawnBin([
      ...timing,
      '--leader-election-identity',
      'replica-b',
      '--branch-eni-cooldown',
      '1s',
    ]);
    const leads = (r: { log: string[] }) => r.log.some((l) => l.includes('"became the leader"'));
    const first = await eventually('a leader', () => (leads(a) ? a : leads(b) ? b : undefined), 20_000);
    const standby = first === a ? b : a;
    world.pod('client-1', 'node-1', { app: 'db-client' });
    await eventually('client-1 annotated', () => world!.annotation('client-1'), 20_000);
    const lease = world.kube.objects.get(
      'coordination.k8s.io/v1',
      'leases',
      'cp-vpc-resource-controller',
      'kube-system',
    ) as {
      spec: { holderIdentity: string };
    };
    expect(lease.spec.holderIdentity).toBe(first === a ? 'replica-a' : 'replica-b');
    expect(leads(standby)).toBe(false);
    expect(standby.log.some((l) => l.includes('"acting: watching the cluster"'))).toBe(false);

    first.child.kill('SIGKILL');
    await eventually('failover', () => leads(standby), 20_000);
    world.pod('client-2', 'node-2', { app: 'db-client' });
    await eventually('client-2 annotated by the new leader', () => world!.annotation('client-2'), 20_000);
    expect(world.ec2.state.enis().filter((e) => e.interfaceType === 'trunk')).toHaveLength(2);
    expect(consistent(world)).toBe(true);
    standby.child.kill('SIGTERM');
    expect(await exited(standby.child)).toBe(0);
    const released = world.kube.objects.get(
      'coordination.k8s.io/v1',
      'leases',
      'cp-vpc-resource-controller',
      'kube-system',
    ) as {
      spec: { holderIdentity?: string };
    };
    expect(released.spec.holderIdentity ?? '').toBe('');
  });
});
