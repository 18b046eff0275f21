import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { literalSchemaKeys } from '../build/literal-schema-keys.js';

// The SDK's EC2 schema module, as eni-manager (which depends on the SDK) resolves it.
const fromEniManager = createRequire(
  createRequire(import.meta.url).resolve('@vpc-cni-kit/eni-manager/package.json'),
);
const sdkMain = fromEniManager.resolve('@aws-sdk/client-ec2'); // <pkg>/dist-cjs/index.js
const ec2Schemas = join(dirname(dirname(sdkMain)), 'dist-es', 'schemas', 'schemas_0.js');

/**
 * Evaluates an SDK schema module without its imports (stand-ins for the two it has) and returns its exports,
 * rendered as JSON with every function as its source text (the shapes' thunks, `() => Foo$`).
 */
function evaluateSchemas(source: string): string {
  const names: string[] = [];
  const body = source
    .replace(/^import .*$/gm, '')
    .replace(/^export (var|const) ([\w$]+)/gm, (_m, kind: string, name: string) => {
      names.push(name);
      return `${kind} ${name}`;
    });
  class TypeRegistry {
    registerError(): void {}
  }
  class EC2ServiceException extends Error {}
  const exports = new Function(
    'TypeRegistry',
    'EC2ServiceException',
    `${body}\nreturn { ${names.join(', ')} };`,
  )(TypeRegistry, EC2ServiceException) as Record<string, unknown>;
  delete exports.errorTypeRegistries;
  return JSON.stringify(exports, (_key, value: unknown) =>
    typeof value === 'function' ? `fn:${String(value)}` : value,
  );
}

describe('literalSchemaKeys (daemon build plugin)', () => {
  it('writes computed keys naming string constants as literals, and leaves the rest alone', () => {
    const source = [
      'const _xN = "xmlName";',
      'const _p = "__proto__";',
      'const _s = `template`;',
      'export var A$ = [3, n0, _A, 0, [_B], [[0, { [_xN]: _C }], [() => L, { [_xN]: `Item` , [_eQN]: `X` }]]];',
      'export var B$ = [3, { [_p]: 1 }, { [_s]: 2 }, x[_xN]];',
    ].join('\n');
    const { code, rewritten } = literalSchemaKeys(source);
    expect(rewritten).toBe(2);
    expect(code).toContain('[[0, { "xmlName": _C }], [() => L, { "xmlName": `Item` , [_eQN]: `X` }]]');
    // `__proto__` as a literal key would set the prototype; a template constant is not matched; an element
    // access is not a key.
    expect(code).toContain('export var B$ = [3, { [_p]: 1 }, { [_s]: 2 }, x[_xN]];');
  });

  it('leaves the EC2 schema module of the pinned SDK meaning exactly what it meant', () => {
    const original = readFileSync(ec2Schemas, 'utf8');
    const { code, rewritten } = literalSchemaKeys(original);
    // Thousands of `xmlName` / `ec2QueryName` traits: if the SDK stops writing them this way the plugin is moot.
    expect(rewritten).toBeGreaterThan(10_000);
    expect(code).not.toMatch(/[{,]\s*\[_\w+\]:/);
    const before = evaluateSchemas(original);
    expect(before.length).toBeGreaterThan(1_000_000);
    expect(evaluateSchemas(code)).toBe(before);
  });
});
