/**
 * The `aws-cni` executable: one file holding the plugin program (`main.ts`, bundled and minified) as a string,
 * which it compiles with a V8 code cache kept beside the executable (`aws-cni.v8cache`).
 *
 * A CNI plugin is a fresh process per pod, so V8 parses and compiles the program every time, and compiles
 * each function again the first time it runs. The code cache holds the compiled bytecode of the whole
 * program and of every function an ADD ran, so later processes skip both (docs/benchmarks.md has the
 * measurement). The cache is written after the first ADD that found none, or found one that V8 rejected
 * (another Node version or flags) or that belongs to another build of the program; writing goes through a
 * temporary file and a rename, so concurrent plugins never see half a cache. A directory the plugin cannot
 * write to only costs the speed-up.
 *
 * V8 does not verify what it deserializes (a damaged cache aborts the process), so the cache carries a
 * SHA-256 of its payload, checked before V8 sees it (≈0.5 ms, most of it initializing OpenSSL); a damaged
 * cache is ignored and replaced by the next ADD.
 */
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { Script } from 'node:vm';

/** The bundled program, set at build time. */
declare const __AWS_CNI_PROGRAM__: string;
/** A digest of the program, set at build time: a cache made for another build is never used. */
declare const __AWS_CNI_PROGRAM_ID__: string;

const cachePath = `${__filename}.v8cache`;
/** `aws-cni code cache <program id> <sha256 of the payload>\n`, then V8's payload. */
const magic = `aws-cni code cache ${__AWS_CNI_PROGRAM_ID__} `;
const HEADER_LENGTH = magic.length + 64 + 1;

function digest(payload: Uint8Array): string {
  return createHash('sha256').update(payload).digest('hex');
}

function readCache(): Buffer | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(cachePath);
  } catch {
    return undefined;
  }
  const header = bytes.subarray(0, HEADER_LENGTH).toString('latin1');
  const payload = bytes.subarray(HEADER_LENGTH);
  if (!header.startsWith(magic) || header !== `${magic}${digest(payload)}\n`) return undefined;
  return payload;
}

function writeCache(script: Script): void {
  const tmp = `${cachePath}.tmp-${process.pid}`;
  try {
    const payload = script.createCachedData();
    writeFileSync(tmp, Buffer.concat([Buffer.from(`${magic}${digest(payload)}\n`, 'latin1'), payload]), {
      mode: 0o644,
    });
    renameSync(tmp, cachePath);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {}
  }
}

const cachedData = readCache();
const script = new Script(
  `(function (exports, require, module, __filename, __dirname) {${__AWS_CNI_PROGRAM__}\n})`,
  cachedData === undefined ? { filename: __filename } : { filename: __filename, cachedData },
);
if (
  (cachedData === undefined || script.cachedDataRejected === true) &&
  process.env['CNI_COMMAND'] === 'ADD'
) {
  // After the ADD has run, so the cache holds the functions an ADD needs, not only the top level.
  process.once('exit', () => writeCache(script));
}
const program = script.runInThisContext() as (
  exports: unknown,
  require: NodeJS.Require,
  module: NodeJS.Module,
  filename: string,
  dirname: string,
) => void;
program.call(module.exports, module.exports, require, module, __filename, __dirname);
