import { describe, expect, it } from 'vitest';
import { answerCommandLine, EXIT_USAGE, type OptionSpecs, readOptions } from '../src/index.js';

const OPTIONS: OptionSpecs = {
  port: { type: 'string' },
  name: { type: 'string', short: 'n' },
  tag: { type: 'string', multiple: true },
  verbose: { type: 'boolean', short: 'v' },
};

describe('readOptions', () => {
  it('reads string, repeated and boolean options', () => {
    expect(readOptions(['--port', '80', '-n', 'x', '--tag=a', '--tag', 'b', '-v'], OPTIONS)).toEqual({
      values: { port: '80', name: 'x', tag: ['a', 'b'], verbose: true },
      positionals: [],
    });
  });

  it('takes a negative number after a string option as its value, written either way', () => {
    for (const argv of [['--port', '-1'], ['--port=-1']])
      expect(readOptions(argv, OPTIONS)).toEqual({ values: { port: '-1' }, positionals: [] });
    expect(readOptions(['--name', '-5s'], OPTIONS)).toMatchObject({ values: { name: '-5s' } });
    expect(readOptions(['--tag', '-1', '--tag', '-2'], OPTIONS)).toMatchObject({
      values: { tag: ['-1', '-2'] },
    });
  });

  it('leaves other dashes to parseArgs: a boolean before a number, an option-like value, anything after --', () => {
    // -1 after a boolean is an unknown option, not its value.
    expect(readOptions(['--verbose', '-1'], OPTIONS)).toEqual({ problem: "Unknown option '-1'" });
    // A value that looks like an option (not a number) stays ambiguous, as parseArgs says.
    expect(readOptions(['--port', '-x'], OPTIONS)).toMatchObject({
      problem: "Option '--port' argument is ambiguous.",
    });
    expect(readOptions(['--', '--port', '-1'], OPTIONS, { allowPositionals: true })).toEqual({
      values: {},
      positionals: ['--port', '-1'],
    });
  });

  it('refuses unknown options, missing values and (unless allowed) stray arguments, in one line', () => {
    for (const [argv, problem] of [
      [['--nope'], "Unknown option '--nope'"],
      [['--port'], "Option '--port <value>' argument missing"],
      [['serve'], /^Unexpected argument 'serve'/],
    ] as const) {
      const read = readOptions(argv, OPTIONS);
      expect(read).toEqual({
        problem: typeof problem === 'string' ? problem : expect.stringMatching(problem),
      });
      expect((read as { problem: string }).problem).not.toContain('\n');
    }
    expect(readOptions(['serve', '--port', '-1'], OPTIONS, { allowPositionals: true })).toEqual({
      values: { port: '-1' },
      positionals: ['serve'],
    });
  });
});

describe('answerCommandLine', () => {
  const text = { program: 'prog', usage: 'usage: prog [options]\n', version: '1.2.3' };
  const answer = (line: Parameters<typeof answerCommandLine>[0]) => {
    const out = { stdout: '', stderr: '' };
    const code = answerCommandLine(line, text, {
      stdout: (s) => {
        out.stdout += s;
      },
      stderr: (s) => {
        out.stderr += s;
      },
    });
    return { code, ...out };
  };

  it('prints the usage, or the program and version, on stdout with status 0', () => {
    expect(answer({ kind: 'help' })).toEqual({ code: 0, stdout: text.usage, stderr: '' });
    expect(answer({ kind: 'version' })).toEqual({ code: 0, stdout: 'prog 1.2.3\n', stderr: '' });
  });

  it('prints the problem and the usage on stderr with the usage status', () => {
    expect(answer({ kind: 'invalid', problem: "Unknown option '--x'" })).toEqual({
      code: EXIT_USAGE,
      stdout: '',
      stderr: "prog: Unknown option '--x'\n\nusage: prog [options]\n",
    });
    expect(EXIT_USAGE).toBe(2);
  });

  it('leaves a run to the program', () => {
    expect(answer({ kind: 'run' })).toEqual({ code: undefined, stdout: '', stderr: '' });
  });
});
