// The plugin log (pluginLogFile / pluginLogLevel): what is written where, directory creation, rotation the
// reference's way (size at open, capped backups), and that a log which cannot be written costs nothing else.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir } from '@vpc-cni-kit/testkit';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { isoTime } from '../src/log/logger.js';
import { openPluginLog } from '../src/plugin/plugin-log.js';

const dir = scratchDir('vck-pluginlog-');
afterAll(() => dir.remove());
let n = 0;
const fresh = () => {
  const d = join(dir.path, `d${++n}`);
  mkdirSync(d);
  return d;
};
const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('isoTime', () => {
  it('formats like Date#toISOString for any millisecond from 1970 to 9999', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (ms) => {
        expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 20_000 },
    );
    for (const ms of [0, 951_782_400_000, 4_107_542_399_999, 253_402_300_799_999])
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });
});

describe('openPluginLog', () => {
  it('appends JSON lines at or above the level, in the daemon log shape', () => {
    const path = join(fresh(), 'plugin.log');
    const t = Date.UTC(2026, 10, 23, 21, 0, 0);
    const log = openPluginLog(path, 'Info', { now: () => t });
    log.debug('not written');
    log.info('Received CNI add request', { containerID: 'c1' });
    log.error('add failed', { code: 11 });
    openPluginLog(path, 'DEBUG', { now: () => t }).debug('second process', { pid: 2 });
    expect(lines(path)).toEqual([
      { ts: '2026-11-23T21:00:00.000Z', level: 'info', msg: 'Received CNI add request', containerID: 'c1' },
      { ts: '2026-11-23T21:00:00.000Z', level: 'error', msg: 'add failed', code: 11 },
      { ts: '2026-11-23T21:00:00.000Z', level: 'debug', msg: 'second process', pid: 2 },
    ]);
  });

  it('opens nothing until a line is written, and creates the directory then', () => {
    const path = join(fresh(), 'var/log/aws-routed-eni/plugin.log');
    const quiet = openPluginLog(path, 'error');
    quiet.info('below the level');
    expect(existsSync(path)).toBe(false);
    openPluginLog(path, 'error').error('written');
    expect(lines(path).map((l) => l['msg'])).toEqual(['written']);
  });

  it('rotates a full file at open to <name>-<time>.log and keeps only the newest backups', () => {
    const d = fresh();
    const path = join(d, 'plugin.log');
    let clock = Date.UTC(2026, 10, 23, 21, 0, 0);
    for (let i = 0; i < 5; i++) {
      writeFileSync(path, 'x'.repeat(200)); // full: ≥ maxBytes
      const log = openPluginLog(path, 'debug', {
        maxBytes: 100,
        backups: 3,
        checkEvery: 1,
        now: () => clock,
      });
      log.info(`line ${i}`);
      clock += 1000;
    }
    const files = readdirSync(d).sort();
    expect(files).toEqual([
      'plugin-2026-11-23T21-00-02.000.log',
      'plugin-2026-11-23T21-00-03.000.log',
      'plugin-2026-11-23T21-00-04.000.log',
      'plugin.log',
    ]);
    expect(lines(path).map((l) => l['msg'])).toEqual(['line 4']);
    // A file under the limit is appended to, not rotated.
    openPluginLog(path, 'debug', { maxBytes: 10_000, backups: 3, checkEvery: 1 }).info('appended');
    expect(lines(path).map((l) => l['msg'])).toEqual(['line 4', 'appended']);
    // An open that does not look at the size appends even to a full file; one that does, rotates it.
    openPluginLog(path, 'debug', { maxBytes: 10, checkEvery: 16, random: () => 0.5 }).info('unchecked');
    expect(lines(path).map((l) => l['msg'])).toEqual(['line 4', 'appended', 'unchecked']);
    openPluginLog(path, 'debug', { maxBytes: 10, checkEvery: 16, random: () => 0.01, now: () => clock }).info(
      'checked',
    );
    expect(lines(path).map((l) => l['msg'])).toEqual(['checked']);
  });

  it('drops lines it cannot write, without throwing', () => {
    const d = fresh();
    writeFileSync(join(d, 'file'), 'not a directory');
    const log = openPluginLog(join(d, 'file', 'plugin.log'), 'debug');
    expect(() => {
      log.info('lost');
      log.error('lost too');
    }).not.toThrow();
  });
});
