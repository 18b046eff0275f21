import { describe, expect, it } from 'vitest';
import {
  type CniCommand,
  CniError,
  CniErrorCode,
  type CommandContext,
  commandSupported,
  MAX_STDIN_BYTES,
  type PluginHandlers,
  type Result,
  runPlugin,
  SUPPORTED_VERSIONS,
} from '../src/index.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  calls: Array<{ command: CniCommand; ctx: CommandContext }>;
}

const env = {
  CNI_CONTAINERID: 'c1',
  CNI_NETNS: '/run/netns/p',
  CNI_IFNAME: 'eth0',
  CNI_PATH: '/opt/cni/bin',
};

async function run(
  command: string,
  stdin: string | object | (() => never),
  handlers: Partial<PluginHandlers> = {},
  extraEnv: Record<string, string> = {},
): Promise<Run> {
  const out: Run = { code: -1, stdout: '', stderr: '', calls: [] };
  const record = (c: CniCommand) => (ctx: CommandContext) => {
    out.calls.push({ command: c, ctx });
  };
  const all: PluginHandlers = {
    add: (ctx) => {
      record('ADD')(ctx);
      return {
        cniVersion: '1.1.0',
        interfaces: [{ name: 'eth0', sandbox: ctx.env.netns, mtu: 9001 }],
        ips: [{ address: '10.0.0.7/32', gateway: '169.254.1.1', interface: 0 }],
        routes: [{ dst: '0.0.0.0/0', gw: '169.254.1.1', scope: 0 }],
      } satisfies Result;
    },
    del: record('DEL'),
    check: record('CHECK'),
    gc: record('GC'),
    status: record('STATUS'),
    ...handlers,
  };
  out.code = await runPlugin(all, {
    env: { ...env, ...extraEnv, CNI_COMMAND: command },
    stdin:
      typeof stdin === 'function'
        ? (stdin as () => never)
        : () => (typeof stdin === 'string' ? stdin : JSON.stringify(stdin)),
    stdout: (t) => {
      out.stdout += t;
    },
    stderr: (t) => {
      out.stderr += t;
    },
  });
  return out;
}

const conf = (v: string, extra: object = {}) => ({ cniVersion: v, name: 'net', type: 'test', ...extra });

describe('runPlugin', () => {
  describe('run by hand, with an about line (as the CNI Go skeleton)', () => {
    const about = 'test-plugin v1.2.3: for tests';
    const byHand = async (env: Record<string, string>, args: string[] = []) => {
      const out = { code: -1, stdout: '', stderr: '', stdinRead: false };
      out.code = await runPlugin(
        { add: () => ({ cniVersion: '1.1.0' }), del: () => {} },
        {
          env,
          args,
          stdin: () => {
            out.stdinRead = true;
            return '';
          },
          stdout: (t) => {
            out.stdout += t;
          },
          stderr: (t) => {
            out.stderr += t;
          },
        },
        { about, supportedVersions: ['1.0.0', '0.4.0', '1.1.0'] },
      );
      return out;
    };
    const expected = {
      code: 0,
      stdout: '',
      stderr: `${about}\nCNI protocol versions supported: 0.4.0, 1.0.0, 1.1.0\n`,
      stdinRead: false,
    };

    it('without CNI_COMMAND (unset or empty), whatever the arguments: the about line and versions, exit 0', async () => {
      expect(await byHand({})).toEqual(expected);
      expect(await byHand({ CNI_COMMAND: '' })).toEqual(expected);
      expect(await byHand({}, ['--version'])).toEqual(expected);
      expect(await byHand({}, ['something'])).toEqual(expected);
    });

    it.each(['--help', '-h', '--version', '-v'])(
      '%s answers the same even with CNI_COMMAND set',
      async (arg) => {
        expect(await byHand({ ...env, CNI_COMMAND: 'ADD' }, [arg])).toEqual(expected);
      },
    );

    it('other arguments are ignored, as runtimes pass none', async () => {
      const r = await byHand({ CNI_COMMAND: 'VERSION' }, ['--verbose']);
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(JSON.parse(r.stdout)).toMatchObject({ cniVersion: '1.1.0' });
    });

    it('without an about line, a missing CNI_COMMAND stays error 4 and --version is ignored', async () => {
      const out = { stdout: '', stderr: '' };
      const code = await runPlugin(
        { add: () => ({ cniVersion: '1.1.0' }), del: () => {} },
        {
          env: {},
          args: ['--version'],
          stdin: () => '',
          stdout: (t) => {
            out.stdout += t;
          },
          stderr: (t) => {
            out.stderr += t;
          },
        },
      );
      expect(code).toBe(1);
      expect(out.stderr).toBe('');
      expect(JSON.parse(out.stdout)).toMatchObject({ code: CniErrorCode.InvalidEnvironment });
    });
  });

  it('answers VERSION without any other variable or valid stdin', async () => {
    const r = await run('VERSION', 'garbage');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ cniVersion: '1.1.0', supportedVersions: [...SUPPORTED_VERSIONS] });
  });

  describe.each(SUPPORTED_VERSIONS)('at cniVersion %s', (v) => {
    it('ADD prints the result in the request version', async () => {
      const r = await run('ADD', conf(v));
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out.cniVersion).toBe(v);
      expect(out.ips[0].address).toBe('10.0.0.7/32');
      expect('version' in out.ips[0]).toBe(v.startsWith('0.'));
      expect('mtu' in out.interfaces[0]).toBe(v === '1.1.0');
      expect(r.calls[0]?.ctx.env.ifname).toBe('eth0');
    });

    it('DEL prints nothing and succeeds', async () => {
      const r = await run(
        'DEL',
        conf(v, { prevResult: { cniVersion: v, ips: [{ address: '10.0.0.7/32' }] } }),
      );
      expect([r.code, r.stdout]).toEqual([0, '']);
      expect(r.calls[0]?.ctx.config.prevResult?.ips?.[0]?.address).toBe('10.0.0.7/32');
    });

    it.each(['CHECK', 'GC', 'STATUS'] as const)(
      '%s runs only where the version defines it',
      async (command) => {
        const r = await run(command, conf(v));
        if (commandSupported(command, v)) {
          expect([r.code, r.stdout, r.calls[0]?.command]).toEqual([0, '', command]);
        } else {
          expect(r.code).toBe(1);
          expect(JSON.parse(r.stdout)).toMatchObject({
            cniVersion: v,
            code: CniErrorCode.IncompatibleVersion,
            msg: `config version does not allow ${command}`,
          });
          expect(r.calls).toEqual([]);
        }
      },
    );

    it('reports a handler’s CNI error with its code, in the request version', async () => {
      const r = await run('ADD', conf(v), {
        add: () => {
          throw new CniError(CniErrorCode.TryAgainLater, 'no free IP in the pool', 'ENI limit reached');
        },
      });
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toEqual({
        cniVersion: v,
        code: 11,
        msg: 'no free IP in the pool',
        details: 'ENI limit reached',
      });
    });
  });

  it('turns any other exception into code 999 and never throws', async () => {
    const r = await run('DEL', conf('1.0.0'), {
      del: () => {
        throw new TypeError('boom');
      },
    });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ cniVersion: '1.0.0', code: 999, msg: 'boom' });
  });

  it('validates the result a handler returns', async () => {
    const r = await run('ADD', conf('1.0.0'), {
      add: () => ({ cniVersion: '1.0.0', ips: [{ address: '10.0.0.1' }] }),
    });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      code: 999,
      msg: expect.stringMatching(/ips\[0\]\.address/),
    });
  });

  it.each([
    ['a missing variable', 'ADD', conf('1.0.0'), { CNI_NETNS: '' }, 4],
    ['an unknown command', 'PING', conf('1.0.0'), {}, 4],
    [
      'unreadable stdin',
      'ADD',
      () => {
        throw new Error('EIO');
      },
      {},
      5,
    ],
    ['stdin that is not JSON', 'ADD', '{', {}, 6],
    ['an invalid config', 'ADD', { cniVersion: '1.0.0', name: 'n' }, {}, 7],
    ['an unsupported version', 'ADD', conf('0.2.0'), {}, 1],
    ['a malformed CNI_ARGS', 'ADD', conf('1.0.0'), { CNI_ARGS: 'x' }, 4],
  ] as const)('fails closed on %s with code %s', async (_n, command, stdin, extra, code) => {
    const r = await run(command, stdin as never, {}, extra);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).code).toBe(code);
    expect(r.calls).toEqual([]);
  });
});

describe('stdin larger than the limit', () => {
  /** A valid DEL request padded with spaces (still valid JSON) to `bytes` bytes. */
  const padded = (bytes: number) => {
    const text = JSON.stringify(conf('1.0.0'));
    return text + ' '.repeat(bytes - text.length);
  };
  /** Runs DEL with `stdin`, recording the limit the skeleton asked the reader for. */
  const del = async (stdin: (maxBytes: number) => string | Uint8Array, options = {}) => {
    const seen: number[] = [];
    let stdout = '';
    let called = false;
    const code = await runPlugin(
      {
        add: () => {
          throw new Error('not called');
        },
        del: () => {
          called = true;
        },
      },
      {
        env: { ...env, CNI_COMMAND: 'DEL' },
        stdin: (maxBytes) => {
          seen.push(maxBytes);
          return stdin(maxBytes);
        },
        stdout: (t) => {
          stdout += t;
        },
        stderr: () => undefined,
      },
      options,
    );
    return { code, stdout, called, seen };
  };

  it('is refused with code 5 before it is decoded; exactly the limit is still read', async () => {
    const over = await del(() => padded(MAX_STDIN_BYTES + 1));
    expect(over).toMatchObject({ code: 1, called: false, seen: [MAX_STDIN_BYTES] });
    expect(JSON.parse(over.stdout)).toEqual({
      code: CniErrorCode.IoFailure,
      msg: `stdin is larger than ${MAX_STDIN_BYTES} bytes`,
      details: expect.stringContaining('stopped reading there'),
    });
    expect(await del(() => padded(MAX_STDIN_BYTES))).toMatchObject({ code: 0, called: true });
  });

  it('counts bytes, not characters, and takes a limit of its own (maxStdinBytes)', async () => {
    // The é is one character and two bytes in UTF-8.
    const text = JSON.stringify(conf('1.0.0', { note: 'é' }));
    const bytes = Buffer.byteLength(text);
    expect((await del(() => text, { maxStdinBytes: bytes })).code).toBe(0);
    const over = await del(() => text, { maxStdinBytes: bytes - 1 });
    expect(over).toMatchObject({ code: 1, called: false, seen: [bytes - 1] });
    expect(JSON.parse(over.stdout).code).toBe(CniErrorCode.IoFailure);
    expect((await del(() => Buffer.from(text), { maxStdinBytes: bytes - 1 })).code).toBe(1);
  });
});
