import { createHash, X509Certificate } from 'node:crypto';
import { type FSWatcher, watch } from 'node:fs';
import { dirname } from 'node:path';
import { createSecureContext } from 'node:tls';
import { isRegularFileError, RegularFileError, readRegularFile } from '@vpc-cni-kit/regular-file';
import type { Logger } from '../controller/logger.js';

/** A certificate and its key, PEM. */
export interface CertificatePair {
  /** The certificate (chain). */
  readonly cert: Buffer;
  /** Its private key. */
  readonly key: Buffer;
}

/**
 * Reads a certificate and its key, each only if it is a regular file: an `open` that never waits, then `fstat`.
 * A FIFO in their place (the Secret volume's files are symbolic links into it, followed) would otherwise hold the
 * event loop, and with it every request the server answers, until something wrote to it.
 *
 * @throws {@link RegularFileError} `NotRegularFile` (what is there instead) or `ReadFailed` (a missing file reads
 *   `cannot read <path>: ENOENT`).
 */
export function readCertificatePair(certFile: string, keyFile: string): CertificatePair {
  return { cert: readPem(certFile), key: readPem(keyFile) };
}

function readPem(path: string): Buffer {
  const content = readRegularFile(path);
  if (content === undefined) throw new RegularFileError('ReadFailed', path, `cannot read ${path}: ENOENT`);
  return content;
}

/** Options of {@link CertificateReloader}. */
export interface CertificateReloaderOptions {
  /** The certificate file. */
  readonly certFile: string;
  /** The key file. */
  readonly keyFile: string;
  /** The pair being served now (read at start). */
  readonly current: CertificatePair;
  /** Called with a new, valid pair: serve it from the next handshake on. */
  readonly apply: (pair: CertificatePair) => void;
  /** Where reloads and refusals are reported. */
  readonly log: Logger;
  /** A check whatever the file events say (a watch can miss a change on some volumes). @defaultValue 10000 */
  readonly pollMs?: number | undefined;
  /** Quiet time after a file event before the files are read, so a pair written in two steps is read once. @defaultValue 100 */
  readonly settleMs?: number | undefined;
}

/** What a certificate file says about itself, for the log. */
function describe(cert: Buffer): { subject: string; notAfter: string; fingerprint256: string } {
  const x = new X509Certificate(cert);
  return { subject: x.subject.replace(/\n/g, ','), notAfter: x.validTo, fingerprint256: x.fingerprint256 };
}

/**
 * Keeps a TLS server's certificate current with its files: the directories holding them are watched (a
 * Kubernetes Secret volume rotates by swapping its `..data` symlink, which a watch on the file itself would not
 * see; cert-manager and the kubelet both rotate that way) and, in case a watch misses something, the files are
 * read every `pollMs`. A new pair is applied only when the key matches the certificate and both parse; an invalid
 * or unreadable one (a file that is not a regular file included: it is never waited on, see
 * `readCertificatePair`) is one warning (once per content) and the pair being served stays.
 */
export class CertificateReloader {
  readonly #o: CertificateReloaderOptions;
  #served: string;
  #refused: string | undefined;
  readonly #watchers: FSWatcher[] = [];
  #poll: NodeJS.Timeout | undefined;
  #settle: NodeJS.Timeout | undefined;

  constructor(options: CertificateReloaderOptions) {
    this.#o = options;
    this.#served = this.#digest(options.current);
  }

  #digest(pair: CertificatePair): string {
    return createHash('sha256').update(pair.cert).update('\0').update(pair.key).digest('hex');
  }

  /** Starts watching (directories) and polling. */
  start(): void {
    for (const dir of new Set([dirname(this.#o.certFile), dirname(this.#o.keyFile)])) {
      try {
        const w = watch(dir, { persistent: false }, () => this.#soon());
        w.on('error', () => undefined);
        this.#watchers.push(w);
      } catch {
        // the poll still notices a change
      }
    }
    this.#poll = setInterval(() => this.check(), this.#o.pollMs ?? 10_000);
    this.#poll.unref();
  }

  #soon(): void {
    if (this.#settle !== undefined) clearTimeout(this.#settle);
    this.#settle = setTimeout(() => {
      this.#settle = undefined;
      this.check();
    }, this.#o.settleMs ?? 100);
    this.#settle.unref();
  }

  /**
   * Reads the files now and applies a new valid pair. Returns what happened: `unchanged`, `reloaded` or
   * `refused` (the pair being served stays).
   */
  check(): 'unchanged' | 'reloaded' | 'refused' {
    let pair: CertificatePair;
    try {
      pair = readCertificatePair(this.#o.certFile, this.#o.keyFile);
    } catch (e) {
      if (!isRegularFileError(e)) throw e;
      return this.#refuse(`read:${e.message}`, { problem: e.message });
    }
    const digest = this.#digest(pair);
    if (digest === this.#served) {
      this.#refused = undefined;
      return 'unchanged';
    }
    let about: ReturnType<typeof describe>;
    try {
      createSecureContext({ cert: pair.cert, key: pair.key });
      about = describe(pair.cert);
    } catch (e) {
      return this.#refuse(digest, {
        problem: (e instanceof Error ? e.message : String(e)).split('\n')[0],
      });
    }
    this.#o.apply(pair);
    this.#served = digest;
    this.#refused = undefined;
    this.#o.log.log('info', 'webhook certificate reloaded', about);
    return 'reloaded';
  }

  #refuse(key: string, fields: { problem: string | undefined }): 'refused' {
    if (this.#refused !== key)
      this.#o.log.log('warn', 'new webhook certificate refused; serving the previous one', {
        certFile: this.#o.certFile,
        keyFile: this.#o.keyFile,
        ...fields,
        hint: 'the Secret must hold a PEM certificate and the private key that matches it',
      });
    this.#refused = key;
    return 'refused';
  }

  /** Stops watching and polling. */
  stop(): void {
    for (const w of this.#watchers) w.close();
    this.#watchers.length = 0;
    if (this.#poll !== undefined) clearInterval(this.#poll);
    if (this.#settle !== undefined) clearTimeout(this.#settle);
  }
}
