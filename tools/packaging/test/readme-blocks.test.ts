import { expect, it } from 'vitest';
import { readmeBlocks } from '../src/readme-blocks.js';

const fence = '```';

it('finds ts and js blocks, runs them by default, and reads the directive above each', () => {
  const md = [
    '# pkg',
    `${fence}ts`,
    'const a = 1;',
    fence,
    '<!-- doctest: sandbox: ip netns add demo -->',
    '',
    `${fence}js`,
    'console.log(2);',
    fence,
    '<!-- doctest: typecheck: a plugin program -->',
    `${fence}ts`,
    'plugin();',
    fence,
    '<!-- doctest: skip: a fragment -->',
    `${fence}ts`,
    'sim.x();',
    fence,
    `${fence}sh`,
    'npm test',
    fence,
  ].join('\n');
  expect(readmeBlocks(md)).toEqual([
    { line: 2, lang: 'ts', code: 'const a = 1;', mode: 'run' },
    { line: 7, lang: 'js', code: 'console.log(2);', mode: 'sandbox', setup: 'ip netns add demo' },
    { line: 11, lang: 'ts', code: 'plugin();', mode: 'typecheck', reason: 'a plugin program' },
    { line: 15, lang: 'ts', code: 'sim.x();', mode: 'skip', reason: 'a fragment' },
  ]);
});

it('reads what an example says it prints', () => {
  const md = [`${fence}js`, 'console.log(1)', fence, '', 'It prints:', '', fence, '1', fence].join('\n');
  expect(readmeBlocks(md)[0]?.prints).toBe('1');
});

it('refuses a skip without a reason and an unterminated block', () => {
  expect(() => readmeBlocks(['<!-- doctest: skip -->', `${fence}ts`, 'x', fence].join('\n'))).toThrow(
    /needs a reason/,
  );
  expect(() => readmeBlocks([`${fence}ts`, 'x'].join('\n'))).toThrow(/unterminated/);
});
