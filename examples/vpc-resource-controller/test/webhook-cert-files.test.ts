/**
 * The webhook's certificate and key are read only as regular files (ADR 0041): a FIFO in their place at start is
 * a `CERT_UNREADABLE` error at once, and one that appears while serving is a refused reload (one warning; the pair
 * being served stays), never a server that waits on it.
 */
import { X509Certificate } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { selfSignedCertificate } from '@vpc-cni-kit/kube-simulator';
import { eventually, fifoWithLateWriter, scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonLogger, serveWebhook, WebhookStartError } from '../src/index.js';

const dir = scratchDir('vpc-rc-webhook-files');
afterAll(() => dir.remove());

/** The fingerprint of the certificate served on `port`. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
      socket.end();
    });
    socket.on('error', reject);
  });
}

const options = (certFile: string, keyFile: string, log: string[]) => ({
  certFile,
  keyFile,
  host: '127.0.0.1',
  port: 0,
  lookup: async () => [],
  log: jsonLogger((l) => log.push(l)),
  reload: { pollMs: 50 },
});

describe('the webhook certificate files', () => {
  it('a FIFO as the certificate or the key at start: CERT_UNREADABLE naming it, at once', async () => {
    const tls = await selfSignedCertificate();
    for (const fifoName of ['start.crt', 'start.key']) {
      const cert = join(dir.path, 'start.crt');
      const key = join(dir.path, 'start.key');
      writeFileSync(cert, tls.cert);
      writeFileSync(key, tls.key);
      const path = join(dir.path, fifoName);
      rmSync(path);
      const fifo = fifoWithLateWriter(path, 5000);
      try {
        const started = performance.now();
        const error = await serveWebhook(options(cert, key, [])).catch((e: unknown) => e);
        expect(performance.now() - started).toBeLessThan(2000);
        expect(error).toBeInstanceOf(WebhookStartError);
        expect(error).toMatchObject({
          code: 'CERT_UNREADABLE',
          message: `${path} is a FIFO, not a regular file`,
        });
      } finally {
        fifo.stop();
        rmSync(path);
      }
    }
  });

  it('a FIFO appearing while serving: one warning, the pair being served stays, a regular pair again is served', async () => {
    const first = await selfSignedCertificate();
    const second = await selfSignedCertificate();
    const fp = (pem: string) => new X509Certificate(pem).fingerprint256;
    const cert = join(dir.path, 'tls.crt');
    const key = join(dir.path, 'tls.key');
    writeFileSync(cert, first.cert);
    writeFileSync(key, first.key);
    const log: string[] = [];
    const { server, address } = await serveWebhook(options(cert, key, log));
    try {
      expect(await servedFingerprint(address.port)).toBe(fp(first.cert));
      rmSync(cert);
      const fifo = fifoWithLateWriter(cert, 5000);
      try {
        // The reloader read the files with readFileSync on each file event and poll: the server stood still.
        const started = performance.now();
        const refused = await eventually(
          'the refusal',
          () => log.find((l) => l.includes('"new webhook certificate refused; serving the previous one"')),
          2000,
        );
        expect(JSON.parse(refused)).toMatchObject({
          level: 'warn',
          problem: `${cert} is a FIFO, not a regular file`,
        });
        expect(await servedFingerprint(address.port)).toBe(fp(first.cert));
        expect(performance.now() - started).toBeLessThan(2000);
        // Polled every 50 ms, still one line.
        await new Promise((r) => setTimeout(r, 300));
        expect(log.filter((l) => l.includes('certificate refused'))).toHaveLength(1);
      } finally {
        fifo.stop();
      }
      writeFileSync(`${key}.new`, second.key);
      writeFileSync(`${cert}.new`, second.cert);
      renameSync(`${key}.new`, key);
      renameSync(`${cert}.new`, cert);
      await eventually(
        'the new pair',
        async () => (await servedFingerprint(address.port)) === fp(second.cert),
        5000,
      );
    } finally {
      server.close();
      server.closeAllConnections();
    }
  });
});
