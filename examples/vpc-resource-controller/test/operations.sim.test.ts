/**
 * The built program's operator surface: `/metrics` (Prometheus text 0.0.4) and the webhook's certificate reloaded
 * from a Secret volume rotated the kubelet's way (a `..data` symlink swap), seen by a real TLS client. Against
 * ec2-simulator and kube-simulator.
 */
import { X509Certificate } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { selfSignedCertificate, type TlsMaterial } from '@vpc-cni-kit/kube-simulator';
import { eventually } from '@vpc-cni-kit/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { startWorld, type World } from './support/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const WEBHOOK_HOST = 'vpc-resource-controller-webhook.kube-system.svc';

function get(port: number, path: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => {
        body += c;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }),
      );
    })
      .on('error', reject)
      .end();
  });
}

/** The value of one series in a text exposition, undefined when absent. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The SHA-256 fingerprint of the certificate a TLS client is served on `port`. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: '127.0.0.1', port, servername: WEBHOOK_HOST, rejectUnauthorized: false },
      () => {
        const fp = socket.getPeerX509Certificate()?.fingerprint256 ?? '';
        socket.end();
        resolve(fp);
      },
    );
    socket.on('error', reject);
  });
}

/** The port the program's webhook listens on, from its `serving the pod mutating webhook` line. */
async function webhookPort(log: readonly string[]): Promise<number> {
  const line = await eventually(
    'webhook',
    () => log.find((l) => l.includes('"serving the pod mutating webhook"')),
    20_000,
  );
  return (JSON.parse(line) as { port: number }).port;
}

/** A Secret volume as the kubelet writes it: `..<ts>/` with the files, `..data` → it, `tls.*` → `..data/tls.*`. */
class SecretVolume {
  #n = 0;
  #current = '';
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }
  /** Writes a new version and swaps `..data` to it atomically (rename over the symlink), as the kubelet does. */
  write(files: Record<string, string>): void {
    const version = `..2026_11_24_00_00_0${this.#n++}`;
    mkdirSync(join(this.dir, version));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(this.dir, version, name), text);
    symlinkSync(version, join(this.dir, '..data_tmp'));
    renameSync(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
    if (this.#current === '')
      for (const name of Object.keys(files)) symlinkSync(join('..data', name), join(this.dir, name));
    else rmSync(join(this.dir, this.#current), { recursive: true });
    this.#current = version;
  }
}

describe('the program: metrics and certificate rotation', () => {
  it('serves /metrics with the reference names: leader status, sgp_enabled, EC2 calls by action, trunks, webhook requests', async () => {
    world = await startWorld();
    const w = world;
    const tls = await selfSignedCertificate([WEBHOOK_HOST]);
    writeFileSync(join(w.scratchPath, 'tls.crt'), tls.cert);
    writeFileSync(join(w.scratchPath, 'tls.key'), tls.key);
    const run = w.spawnBin([
      '--leader-elect',
      '--leader-election-identity',
      'metrics-test',
      '--metrics-bind-address',
      '127.0.0.1:0',
      '--webhook-bind-address',
      '127.0.0.1:0',
      '--webhook-cert-file',
      join(w.scratchPath, 'tls.crt'),
      '--webhook-key-file',
      join(w.scratchPath, 'tls.key'),
    ]);
    const serving = JSON.parse(
      await eventually('metrics served', () => run.log.find((l) => l.includes('"serving metrics"')), 20_000),
    ) as { port: number; path: string };
    expect(serving.path).toBe('/metrics');
    const port = serving.port;
    const webhook = await webhookPort(run.log);
    // One admission request (malformed: 400) for the webhook counters.
    await new Promise<void>((resolve, reject) => {
      const socket = connect(
        { host: '127.0.0.1', port: webhook, ca: tls.cert, servername: WEBHOOK_HOST },
        () => {
          socket.end(
            'POST /mutate-v1-pod HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nConnection: close\r\n\r\n{',
          );
        },
      );
      socket
        .on('data', () => undefined)
        .on('end', () => resolve())
        .on('error', reject);
    });

    const text = await eventually(
      'both trunks counted',
      async () => {
        const r = await get(port, '/metrics');
        return value(r.body, 'trunk_eni_count') === 2 ? r : undefined;
      },
      20_000,
    );
    expect(text.status).toBe(200);
    expect(text.type).toBe('text/plain; version=0.0.4; charset=utf-8');
    const body = text.body;
    expect(value(body, 'leader_election_master_status{name="cp-vpc-resource-controller"}')).toBe(1);
    expect(value(body, 'sgp_enabled')).toBe(1);
    expect(value(body, 'ec2_describe_instances_api_req_count')).toBe(2);
    expect(value(body, 'ec2_create_network_interface_api_req_count')).toBe(2);
    expect(value(body, 'ec2_attach_network_interface_api_req_count')).toBe(2);
    expect(value(body, 'ec2_api_req_count')).toBeGreaterThanOrEqual(8);
    expect(value(body, 'ec2_api_err_count')).toBe(0);
    expect(value(body, 'branch_eni_cooldown_queue_depth')).toBe(0);
    expect(value(body, 'branch_eni_cooldown_period_seconds')).toBe(60);
    expect(
      value(body, 'controller_runtime_webhook_requests_total{webhook="/mutate-v1-pod",code="400"}'),
    ).toBe(1);
    expect(value(body, 'controller_runtime_webhook_requests_in_flight{webhook="/mutate-v1-pod"}')).toBe(0);
    expect(body).toContain('# TYPE aws_nw_call_latency summary');
    expect(body).toContain('process_resident_memory_bytes');
    expect((await get(port, '/other')).status).toBe(404);
    run.child.kill('SIGTERM');
    expect(await new Promise((r) => run.child.once('exit', r))).toBe(0);
  });

  it('refuses a bad --metrics-bind-address at start (exit 2), and a port in use with one line (exit 1)', async () => {
    world = await startWorld();
    const bad = world.spawnBin(['--metrics-bind-address', '8080']);
    expect(await new Promise((r) => bad.child.once('exit', r))).toBe(2);
    expect(bad.stderr.join('').split('\n')[0]).toBe(
      'vpc-resource-controller: bad --metrics-bind-address "8080": HOST:PORT or :PORT',
    );
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const { port } = taken.address() as { port: number };
    try {
      const busy = world.spawnBin(['--metrics-bind-address', `127.0.0.1:${port}`]);
      expect(await new Promise((r) => busy.child.once('exit', r))).toBe(1);
      expect(busy.stderr.join('')).toBe(
        `vpc-resource-controller: cannot serve metrics on 127.0.0.1:${port}: EADDRINUSE (hint: pick a free port with --metrics-bind-address, or 0 for none)\n`,
      );
    } finally {
      taken.close();
    }
  });

  it('serves a rotated certificate after a Secret volume symlink swap; an invalid new pair is one warning and the old one stays', async () => {
    world = await startWorld();
    const w = world;
    const volume = new SecretVolume(join(w.scratchPath, 'serving-certs'));
    const first: TlsMaterial = await selfSignedCertificate([WEBHOOK_HOST]);
    const second: TlsMaterial = await selfSignedCertificate([WEBHOOK_HOST]);
    const third: TlsMaterial = await selfSignedCertificate([WEBHOOK_HOST]);
    const fp = (t: TlsMaterial) => new X509Certificate(t.cert).fingerprint256;
    volume.write({ 'tls.crt': first.cert, 'tls.key': first.key });
    const run = w.spawnBin([
      '--webhook-bind-address',
      '127.0.0.1:0',
      '--webhook-cert-file',
      join(volume.dir, 'tls.crt'),
      '--webhook-key-file',
      join(volume.dir, 'tls.key'),
    ]);
    const port = await webhookPort(run.log);
    expect(await servedFingerprint(port)).toBe(fp(first));

    // cert-manager renews: the kubelet swaps ..data; the next handshake gets the new certificate.
    volume.write({ 'tls.crt': second.cert, 'tls.key': second.key });
    await eventually(
      'the rotated certificate',
      async () => (await servedFingerprint(port)) === fp(second),
      15_000,
    );
    expect(
      run.log.filter((l) => l.includes('"webhook certificate reloaded"')).map((l) => JSON.parse(l)),
    ).toEqual([expect.objectContaining({ level: 'info', fingerprint256: fp(second) })]);

    // A broken rotation (a certificate with another pair's key): one warning, the second pair still served.
    volume.write({ 'tls.crt': third.cert, 'tls.key': first.key });
    const refused = await eventually(
      'the refusal',
      () => run.log.find((l) => l.includes('"new webhook certificate refused; serving the previous one"')),
      15_000,
    );
    expect(JSON.parse(refused)).toMatchObject({
      level: 'warn',
      problem: expect.stringMatching(/key values mismatch/),
    });
    expect(await servedFingerprint(port)).toBe(fp(second));
    await new Promise((r) => setTimeout(r, 300));
    expect(run.log.filter((l) => l.includes('certificate refused'))).toHaveLength(1);

    // Mended: served.
    volume.write({ 'tls.crt': third.cert, 'tls.key': third.key });
    await eventually('the mended pair', async () => (await servedFingerprint(port)) === fp(third), 15_000);
    expect(run.child.exitCode).toBeNull();
  });
});
