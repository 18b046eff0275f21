import { describe, expect, it } from 'vitest';
import {
  BUILTIN_TYPES,
  checkSchema,
  jsonPatch,
  KubeApiError,
  matchesLabels,
  mergePatch,
  parseFieldSelector,
  parseLabelSelector,
  sortVersions,
  strategicMergePatch,
} from '../src/index.js';

const pods = BUILTIN_TYPES.find((t) => t.plural === 'pods')!;

describe('label selectors', () => {
  it('parses every operator and matches like the API server', () => {
    const s = parseLabelSelector('app=web,tier!=db,env in (prod, stage),!legacy,gen>2,zone');
    const labels = { app: 'web', tier: 'front', env: 'prod', gen: '3', zone: 'a' };
    expect(matchesLabels(s, labels)).toBe(true);
    expect(matchesLabels(s, { ...labels, legacy: 'x' })).toBe(false);
    expect(matchesLabels(s, { ...labels, gen: '2' })).toBe(false);
    expect(matchesLabels(parseLabelSelector('tier notin (db)'), {})).toBe(true);
    expect(matchesLabels(parseLabelSelector(''), {})).toBe(true);
  });
  it('refuses bad syntax with 400 BadRequest', () => {
    for (const bad of ['a in ()', 'a==b==c', 'bad key=1', 'a=b c'])
      expect(() => parseLabelSelector(bad), bad).toThrow(KubeApiError);
  });
  it('knows which fields a resource selects by', () => {
    expect(
      parseFieldSelector('spec.nodeName=n1,metadata.name!=x', ['metadata.name', 'spec.nodeName']),
    ).toEqual([
      { field: 'spec.nodeName', op: '=', value: 'n1' },
      { field: 'metadata.name', op: '!=', value: 'x' },
    ]);
    expect(() => parseFieldSelector('spec.foo=1', ['metadata.name'])).toThrow(
      'field label not supported: spec.foo',
    );
  });
});

describe('patches', () => {
  it('merge patch (RFC 7386) deletes with null and replaces lists', () => {
    expect(mergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { b: null }, l: [3] })).toEqual({
      a: { c: 2 },
      l: [3],
    });
  });
  it('strategic merge merges lists by key and honours $patch directives', () => {
    const pod = {
      spec: {
        containers: [
          { name: 'a', image: '1', env: [{ name: 'X', value: '1' }] },
          { name: 'b', image: '1' },
        ],
        tolerations: [{ key: 'k' }],
      },
      metadata: { finalizers: ['f1'] },
    };
    const out = strategicMergePatch(
      pod,
      {
        metadata: { finalizers: ['f2'] },
        spec: {
          containers: [
            { name: 'a', env: [{ name: 'Y', value: '2' }] },
            { name: 'b', $patch: 'delete' },
            { name: 'c', image: '3' },
          ],
          $setElementOrder: undefined,
        },
      },
      pods.listStrategies,
    ) as typeof pod;
    expect(out.spec.containers).toEqual([
      {
        name: 'a',
        image: '1',
        env: [
          { name: 'X', value: '1' },
          { name: 'Y', value: '2' },
        ],
      },
      { name: 'c', image: '3' },
    ]);
    expect(out.metadata.finalizers).toEqual(['f1', 'f2']);
    const replaced = strategicMergePatch(
      pod,
      { spec: { $patch: 'replace', containers: [] } },
      pods.listStrategies,
    ) as typeof pod;
    expect(replaced.spec).toEqual({ containers: [] });
    const pruned = strategicMergePatch(
      pod,
      { metadata: { '$deleteFromPrimitiveList/finalizers': ['f1'] } },
      pods.listStrategies,
    ) as typeof pod;
    expect(pruned.metadata.finalizers).toEqual([]);
  });
  it('JSON patch applies all operations or none', () => {
    const doc = { a: [1, 2], b: { c: 1 } };
    expect(
      jsonPatch(doc, [
        { op: 'add', path: '/a/-', value: 3 },
        { op: 'move', from: '/b/c', path: '/d' },
        { op: 'copy', from: '/d', path: '/e' },
      ]),
    ).toEqual({ a: [1, 2, 3], b: {}, d: 1, e: 1 });
    expect(() =>
      jsonPatch(doc, [
        { op: 'remove', path: '/a/0' },
        { op: 'test', path: '/a/0', value: 9 },
      ]),
    ).toThrow(KubeApiError);
    expect(doc).toEqual({ a: [1, 2], b: { c: 1 } });
    expect(() => jsonPatch(doc, [{ op: 'replace', path: '/nope', value: 1 }])).toThrow(/missing/);
  });
  it('JSON patch pointers never reach Object.prototype', () => {
    expect(() => jsonPatch({}, [{ op: 'add', path: '/__proto__/polluted', value: 1 }])).toThrow(KubeApiError);
    expect(() => jsonPatch({}, [{ op: 'add', path: '/constructor/prototype/polluted', value: 1 }])).toThrow(
      KubeApiError,
    );
    expect(() => jsonPatch({ a: {} }, [{ op: 'remove', path: '/a/toString' }])).toThrow(KubeApiError);
    expect(() => jsonPatch({}, [{ op: 'test', path: '/constructor', value: null }])).toThrow(KubeApiError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(typeof Object.prototype.toString).toBe('function');
  });
});

describe('structural schemas', () => {
  it('prunes unknown fields, applies defaults and reports violations', () => {
    const r = checkSchema(
      {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            required: ['subnet'],
            properties: {
              subnet: { type: 'string', pattern: '^subnet-' },
              mode: { type: 'string', enum: ['a', 'b'], default: 'a' },
              n: { type: 'integer', minimum: 1 },
            },
          },
        },
      },
      { spec: { subnet: 'vpc-1', n: 0, extra: true } },
    );
    expect(r.value).toEqual({ spec: { subnet: 'vpc-1', n: 0, mode: 'a' } });
    expect(r.unknownFields).toEqual(['.spec.extra']);
    expect(r.causes.map((c) => c.field)).toEqual(['spec.subnet', 'spec.n']);
    expect(
      checkSchema({ type: 'object', properties: { n: { type: 'integer' } } }, { n: 'x' }).causes[0]!.reason,
    ).toBe('FieldValueTypeInvalid');
  });
  it('orders versions as Kubernetes does', () => {
    expect(sortVersions(['v1alpha1', 'v1beta1', 'v2', 'v1', 'v1beta2'])).toEqual([
      'v2',
      'v1',
      'v1beta2',
      'v1beta1',
      'v1alpha1',
    ]);
  });
});
