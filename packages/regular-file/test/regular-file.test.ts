import { execFileSync, spawn } from 'node:child_process';
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { isRegularFileError, readRegularFile, replaceFileSync, tempPathFor } from '@vpc-cni-kit/regular-file';
import { fifoWithLateWriter } from '@vpc-cni-kit/testkit';
import { afterEach, describe, expect, it } from 'vitest';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), 'vck-rf-'));
  dirs.push(d);
  return d;
}

/** What `f` throws, as `{ code, fileType, errno, message }`, or what it returns as `{ value }`. */
function outcome<T>(f: () => T) {
  try {
    return { value: f() };
  } catch (e) {
    if (!isRegularFileError(e)) throw e;
    return { code: e.code, fileType: e.fileType, errno: e.errno, message: e.message };
  }
}

describe('readRegularFile', () => {
  it('reads a regular file (through a symbolic link too) and returns undefined when there is none', () => {
    const dir = scratch();
    writeFileSync(join(dir, 'token'), 'abc\n');
    symlinkSync(join(dir, 'token'), join(dir, 'link'));
    expect(readRegularFile(join(dir, 'token'), 'utf8')).toBe('abc\n');
    expect(readRegularFile(join(dir, 'link'))).toEqual(Buffer.from('abc\n'));
    expect(readRegularFile(join(dir, 'missing'), 'utf8')).toBeUndefined();
  });

  it('refuses a FIFO at once, never waiting for a writer', () => {
    // A writer comes after 3 s, so an open that waits for one returns (and fails the test) instead of hanging.
    const fifo = fifoWithLateWriter(join(scratch(), 'token'));
    try {
      const started = performance.now();
      expect(outcome(() => readRegularFile(fifo.path, 'utf8'))).toEqual({
        code: 'NotRegularFile',
        fileType: 'FIFO',
        errno: undefined,
        message: `${fifo.path} is a FIFO, not a regular file`,
      });
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      fifo.stop();
    }
  });

  it('names a character device, a directory and a socket for what they are', async () => {
    const dir = scratch();
    symlinkSync('/dev/zero', join(dir, 'device'));
    expect(outcome(() => readRegularFile(join(dir, 'device')))).toMatchObject({
      fileType: 'character device',
    });
    mkdirSync(join(dir, 'directory'));
    expect(outcome(() => readRegularFile(join(dir, 'directory')))).toMatchObject({
      code: 'NotRegularFile',
      fileType: 'directory',
    });
    const socket = join(dir, 'socket');
    const server = createServer();
    await new Promise<void>((r) => server.listen(socket, r));
    try {
      expect(outcome(() => readRegularFile(socket))).toMatchObject({ fileType: 'socket' });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('says ReadFailed with the errno for a path it cannot open', () => {
    const dir = scratch();
    writeFileSync(join(dir, 'file'), 'x');
    // A path through a file: ENOTDIR, not "missing".
    expect(outcome(() => readRegularFile(join(dir, 'file', 'token')))).toMatchObject({
      code: 'ReadFailed',
      errno: 'ENOTDIR',
    });
  });
});

describe('replaceFileSync', () => {
  it('replaces the file whole with the mode asked, leaving no temp file', () => {
    const dir = scratch();
    const path = join(dir, 'aws-cni');
    writeFileSync(path, 'old');
    replaceFileSync(path, Buffer.from('new'), { mode: 0o755 });
    expect(readFileSync(path, 'utf8')).toBe('new');
    expect(statSync(path).mode & 0o777).toBe(0o755 & ~process.umask());
    replaceFileSync(path, 'newer', { flush: false });
    expect(readFileSync(path, 'utf8')).toBe('newer');
    expect(readdirSync(dir)).toEqual(['aws-cni']);
  });

  it('never opens what a dead process left at its temp path: a FIFO or a symbolic link is removed, not used', () => {
    const dir = scratch();
    const path = join(dir, 'aws-cni');
    // The next temp path this process will use (the sequence is per process): what a dead process with the
    // same pid (a container's pid 1 of an earlier run) could have left there.
    const seen = tempPathFor(path);
    const next = seen.replace(/-(\d+)$/, (_, n: string) => `-${Number(n) + 1}`);
    execFileSync('mkfifo', [next]);
    const writer = spawn('sh', ['-c', 'sleep 3; cat "$0" > /dev/null', next], { stdio: 'ignore' });
    try {
      const started = performance.now();
      replaceFileSync(path, 'binary');
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      writer.kill('SIGKILL');
    }
    expect(readFileSync(path, 'utf8')).toBe('binary');
    expect(readdirSync(dir)).toEqual(['aws-cni']);

    // A symbolic link at the next temp path, to a file elsewhere: the file elsewhere is not written.
    const elsewhere = join(scratch(), 'victim');
    writeFileSync(elsewhere, 'untouched');
    const after = tempPathFor(path).replace(/-(\d+)$/, (_, n: string) => `-${Number(n) + 1}`);
    symlinkSync(elsewhere, after);
    replaceFileSync(path, 'again');
    expect(readFileSync(elsewhere, 'utf8')).toBe('untouched');
    expect(readFileSync(path, 'utf8')).toBe('again');
    expect(readdirSync(dir)).toEqual(['aws-cni']);
  });

  it('replaces a symbolic link at the path instead of writing through it', () => {
    const dir = scratch();
    const elsewhere = join(scratch(), 'victim');
    writeFileSync(elsewhere, 'untouched');
    const path = join(dir, 'aws-cni');
    symlinkSync(elsewhere, path);
    replaceFileSync(path, 'binary');
    expect(lstatSync(path).isFile()).toBe(true);
    expect(readFileSync(elsewhere, 'utf8')).toBe('untouched');
  });

  it('fails with WriteFailed naming the path when a directory is there, and leaves no temp file', () => {
    const dir = scratch();
    const path = join(dir, 'aws-cni');
    mkdirSync(path);
    expect(outcome(() => replaceFileSync(path, 'binary'))).toEqual({
      code: 'WriteFailed',
      fileType: undefined,
      errno: 'EISDIR',
      message: `cannot write ${path}: EISDIR`,
    });
    expect(readdirSync(dir)).toEqual([basename(path)]);
  });
});
