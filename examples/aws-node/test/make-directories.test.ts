// makeDirectories: `mkdir -p` one level at a time, so a level the filesystem refuses is a typed error instead of
// Node 20's endless retry (a recursive mkdir under /proc never returns). The binaries that use it are tested
// against /proc paths, in child processes with a deadline, in plugin-cli.test.ts and cli.privileged.test.ts.
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { isMakeDirectoryError, MakeDirectoryError, makeDirectories } from '../src/fs/make-directories.js';

const dir = scratchDir('vck-mkdirs-');
afterAll(() => dir.remove());

function thrown(fn: () => void): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('did not throw');
}

describe('makeDirectories', () => {
  it('creates every missing level with the mode, and accepts what exists', () => {
    const deep = join(dir.path, 'a', 'b', 'c');
    makeDirectories(deep, { mode: 0o700 });
    expect(statSync(deep).isDirectory()).toBe(true);
    expect(statSync(deep).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir.path, 'a')).mode & 0o777).toBe(0o700);
    makeDirectories(deep);
    makeDirectories(`${deep}/`);
    makeDirectories('/');
    makeDirectories(dir.path);
  });

  it('a file in the way: EEXIST for the directory itself, ENOTDIR below it, naming the level', () => {
    const file = join(dir.path, 'file');
    writeFileSync(file, '');
    const exists = thrown(() => makeDirectories(file));
    expect(exists).toBeInstanceOf(MakeDirectoryError);
    expect(exists).toMatchObject({ code: 'DirectoryNotCreated', path: file, errno: 'EEXIST' });
    const below = thrown(() => makeDirectories(join(file, 'x', 'y')));
    expect(isMakeDirectoryError(below)).toBe(true);
    expect(below).toMatchObject({ path: join(file, 'x', 'y'), errno: 'ENOTDIR' });
    expect((below as Error).message).toBe(`cannot create the directory ${join(file, 'x', 'y')} (ENOTDIR)`);
  });

  it('a read-only place: the errno of the level that failed', () => {
    const sys = thrown(() => makeDirectories('/sys/vck-nope/x'));
    // sysfs refuses new entries (EPERM; EROFS where it is mounted read-only).
    expect(sys).toMatchObject({ code: 'DirectoryNotCreated', path: '/sys/vck-nope' });
    expect((sys as MakeDirectoryError).errno).toMatch(/^E(PERM|ROFS|ACCES)$/);
  });

  it('under /proc: ENOENT on the first missing level, at once (a recursive mkdir never returns there)', () => {
    for (const [path, level] of [
      ['/proc/vck-nope', '/proc/vck-nope'],
      ['/proc/vck-nope/a/b', '/proc/vck-nope'],
      ['/proc/self/vck-nope', '/proc/self/vck-nope'],
    ]) {
      expect(thrown(() => makeDirectories(path as string))).toMatchObject({
        code: 'DirectoryNotCreated',
        path: level,
        errno: 'ENOENT',
      });
    }
  });
});
