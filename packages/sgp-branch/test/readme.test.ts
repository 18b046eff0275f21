import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it, vi } from 'vitest';

// Runs the README's first example as written (imports pointed at the sources) and checks what it prints.
it('the README controller example runs and prints what it says', async () => {
  const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(readme)![1]!;
  const src = fileURLToPath(new URL('../src/', import.meta.url));
  const body = block
    .replace(/^import .*$/gm, '')
    .replace(/type BranchClusterView/g, 'unknown')
    .replace(/: BranchClusterView/g, '');
  const lines: string[] = [];
  const log = vi.fn((...args: unknown[]) =>
    lines.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')),
  );
  const lib = await import(`${src}index.ts`);
  const testing = await import(`${src}testing/index.ts`);
  const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
  const run = new AsyncFunction(
    'lib',
    'testing',
    'console',
    `const { BranchController, parsePodEniAnnotation } = lib; const { FakeBranchCloud } = testing;\n${body}`,
  );
  await run(lib, testing, { log });
  expect(lines).toEqual(['annotated 1 10.0.0.10 ["sg-0db"]', '0 0']);
  const printed = [...block.matchAll(/\/\/ → (.*)$/gm)].map((m) => m[1]);
  expect(printed).toEqual(["annotated 1 10.0.0.10 [ 'sg-0db' ]", '0 0']);
});
