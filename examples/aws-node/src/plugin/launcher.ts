/**
 * The `aws-cni` (and `egress-cni`) executable: one file holding the plugin program (bundled and minified) as a string,
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
 * A release build of V8 does not verify what it deserializes: a damaged cache aborts the process. The
 * launcher turns V8's own checksum check on (`--verify-snapshot-checksum`, before compiling, so caches are
 * made and read under the same flags), which makes V8 reject a damaged cache like any other, and the next ADD
 * replaces it. Hashing the payload here instead would cost more than the cache saves: `node:crypto` takes
 * 4–6 ms to load, and a hash in JavaScript over the cache 2–3 ms in a process this young. The flag is set
 * through V8's native binding: `node:v8` would load Node's public stream module (+3 ms) just to reach it.
 */
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { Script } from 'node:vm';
import { processBinding } from '../rpc/process-binding.js';

/** The bundled program, set at build time. */
declare const __AWS_CNI_PROGRAM__: string;
/** A digest of the program, set at build time: a cache made for another build is never used. */
declare const __AWS_CNI_PROGRAM_ID__: string;

const cachePath = `${__filename}.v8cache`;
const header = Buffer.from(`aws-cni code cache ${__AWS_CNI_PROGRAM_ID__}\n`, 'latin1');

/**
 * The cache's bytes after the header, or `undefined` when there is no usable cache. Only a regular file is
 * read: opened without blocking, a FIFO in the cache's place (which a plain open would wait on for a writer,
 * holding every ADD) or a device such as `/dev/zero` (which never ends) is no cache, and the ADD replaces it.
 */
function readCache(): Buffer | undefined {
  let bytes: Buffer;
  let fd: number | undefined;
  try {
    fd = openSync(cachePath, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    if (!fstatSync(fd).isFile()) return undefined;
    bytes = readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return bytes.subarray(0, header.length).equals(header) ? bytes.subarray(header.length) : undefined;
}

function writeCache(script: Script): void {
  const tmp = `${cachePath}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, Buffer.concat([header, script.createCachedData()]), { mode: 0o644 });
    renameSync(tmp, cachePath);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {}
  }
}

/** Sets a V8 flag through the native binding, or `node:v8` where this Node does not serve the binding. */
function setV8Flag(flag: string): void {
  const native = processBinding('v8')?.['setFlagsFromString'];
  if (typeof native === 'function') native(flag);
  else (require('node:v8') as typeof import('node:v8')).setFlagsFromString(flag);
}

setV8Flag('--verify-snapshot-checksum');
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
