import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isCniError,
  parseCniArgs,
  parseConfList,
  parsePluginConfig,
  parseResult,
  runPlugin,
} from '../src/index.js';

/** Any input yields a value or a typed CNI error; nothing else may escape. */
function total(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (!isCniError(e)) throw e;
    expect(typeof e.code).toBe('number');
  }
}

const jsonish = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
  fc.string({ maxLength: 200 }),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
  fc
    .record(
      {
        cniVersion: fc.oneof(fc.constantFrom('0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'), fc.jsonValue()),
        name: fc.oneof(fc.constant('net'), fc.jsonValue()),
        type: fc.oneof(fc.constant('t'), fc.jsonValue()),
        runtimeConfig: fc.jsonValue({ maxDepth: 3 }),
        prevResult: fc.jsonValue({ maxDepth: 4 }),
        plugins: fc.jsonValue({ maxDepth: 3 }),
        ips: fc.jsonValue({ maxDepth: 3 }),
        'cni.dev/valid-attachments': fc.jsonValue({ maxDepth: 3 }),
      },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o)),
);

describe('parsers never crash', () => {
  it('parsePluginConfig / parseConfList / parseResult on arbitrary input', () => {
    fc.assert(
      fc.property(jsonish, (input) => {
        total(() => parsePluginConfig(input));
        total(() => parseConfList(input));
        total(() => parseResult(input));
      }),
      { numRuns: 2000 },
    );
  });

  it('parseCniArgs on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), (s) => total(() => parseCniArgs(s, { known: ['A'] }))),
    );
  });

  it('runPlugin always exits 0 or 1 with JSON or nothing on stdout', async () => {
    await fc.assert(
      fc.asyncProperty(
        jsonish,
        fc.constantFrom('ADD', 'DEL', 'CHECK', 'GC', 'STATUS', 'X'),
        async (input, command) => {
          let stdout = '';
          const code = await runPlugin(
            { add: () => ({ cniVersion: '1.0.0' }), del: () => {} },
            {
              env: {
                CNI_COMMAND: command,
                CNI_CONTAINERID: 'c',
                CNI_NETNS: '/n',
                CNI_IFNAME: 'eth0',
                CNI_PATH: '/p',
              },
              stdin: () => input,
              stdout: (t) => {
                stdout += t;
              },
              stderr: () => {},
            },
          );
          expect([0, 1]).toContain(code);
          if (stdout !== '') JSON.parse(stdout);
          if (code === 1) expect(typeof JSON.parse(stdout).code).toBe('number');
        },
      ),
      { numRuns: 500 },
    );
  });
});
