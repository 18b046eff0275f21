import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A PEM certificate and key. */
export interface TlsMaterial {
  /** PEM certificate (self-signed; also the CA clients trust). */
  readonly cert: string;
  /** PEM private key. */
  readonly key: string;
}

/** Why TLS material could not be made. */
export class TlsError extends Error {
  /** Discriminator. */
  readonly kind = 'TlsError' as const;
  /** Stable code. */
  readonly code = 'TLS_CERT_FAILED' as const;
  /** @param message - what failed */
  constructor(message: string) {
    super(message);
    this.name = 'TlsError';
  }
}

/**
 * Makes a self-signed P-256 certificate for `127.0.0.1`, `::1` and `localhost` (plus `extraNames`) with the
 * `openssl` command (Node cannot issue X.509 certificates itself). It is its own CA: put it in the
 * kubeconfig's `certificate-authority-data`.
 */
export async function selfSignedCertificate(extraNames: readonly string[] = []): Promise<TlsMaterial> {
  const dir = await mkdtemp(join(tmpdir(), 'kube-sim-tls-'));
  try {
    const san = [
      'IP:127.0.0.1',
      'IP:::1',
      'DNS:localhost',
      ...extraNames.map((n) => (/^[\d.:]+$/.test(n) ? `IP:${n}` : `DNS:${n}`)),
    ];
    const args = [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '3650',
      '-subj',
      '/CN=kube-sim',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-addext',
      `subjectAltName=${san.join(',')}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,digitalSignature,keyCertSign',
      '-addext',
      'extendedKeyUsage=serverAuth',
    ];
    await new Promise<void>((resolve, reject) =>
      execFile('openssl', args, { timeout: 10_000 }, (err, _out, stderr) =>
        err
          ? reject(
              new TlsError(
                `openssl could not make a certificate: ${stderr.trim() || err.message} (is the openssl package installed?)`,
              ),
            )
          : resolve(),
      ),
    );
    return {
      cert: await readFile(join(dir, 'cert.pem'), 'utf8'),
      key: await readFile(join(dir, 'key.pem'), 'utf8'),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
