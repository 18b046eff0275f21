import { describe, expect, it } from 'vitest';
import {
  isSgpError,
  matchesLabelSelector,
  podSecurityGroups,
  type SecurityGroupPolicy,
  validateSecurityGroupPolicy,
} from '../src/index.js';

const db: SecurityGroupPolicy = {
  namespace: 'shop',
  name: 'db',
  podSelector: { matchLabels: { app: 'db-client' } },
  groupIds: ['sg-0db'],
};

describe('SecurityGroupPolicy matching', () => {
  it('matchLabels and every matchExpressions operator', () => {
    const labels = { app: 'db-client', tier: 'back' };
    expect(matchesLabelSelector({}, labels)).toBe(true);
    expect(matchesLabelSelector({ matchLabels: { app: 'db-client' } }, labels)).toBe(true);
    expect(matchesLabelSelector({ matchLabels: { app: 'web' } }, labels)).toBe(false);
    expect(
      matchesLabelSelector(
        { matchExpressions: [{ key: 'tier', operator: 'In', values: ['back', 'mid'] }] },
        labels,
      ),
    ).toBe(true);
    expect(
      matchesLabelSelector(
        { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['back'] }] },
        labels,
      ),
    ).toBe(false);
    expect(
      matchesLabelSelector({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, labels),
    ).toBe(true);
    expect(matchesLabelSelector({ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, labels)).toBe(
      true,
    );
    expect(
      matchesLabelSelector({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, labels),
    ).toBe(false);
    expect(
      matchesLabelSelector({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, labels),
    ).toBe(false);
  });

  it('unions the groups of every matching policy in the pod namespace, sorted; other namespaces never match', () => {
    const sa: SecurityGroupPolicy = {
      namespace: 'shop',
      name: 'sa',
      serviceAccountSelector: { matchLabels: { role: 'reader' } },
      groupIds: ['sg-0aa', 'sg-0db'],
    };
    const both: SecurityGroupPolicy = {
      namespace: 'shop',
      name: 'both',
      podSelector: { matchLabels: { app: 'db-client' } },
      serviceAccountSelector: { matchLabels: { role: 'writer' } },
      groupIds: ['sg-0ff'],
    };
    const elsewhere = { ...db, namespace: 'other', groupIds: ['sg-0ee'] };
    const pod = { namespace: 'shop', labels: { app: 'db-client' }, serviceAccountLabels: { role: 'reader' } };
    expect(podSecurityGroups(pod, [db, sa, both, elsewhere])).toEqual(['sg-0aa', 'sg-0db']);
    expect(podSecurityGroups({ ...pod, serviceAccountLabels: { role: 'writer' } }, [db, sa, both])).toEqual([
      'sg-0db',
      'sg-0ff',
    ]);
    expect(
      podSecurityGroups({ ...pod, labels: { app: 'web' }, serviceAccountLabels: {} }, [db, sa, both]),
    ).toEqual([]);
  });

  it('validates policies', () => {
    expect(validateSecurityGroupPolicy(db)).toBe(db);
    const fine = {
      ...db,
      podSelector: {
        matchLabels: { 'example.com/app': 'db-client', tier: '' },
        matchExpressions: [{ key: 'k8s.io/x_y.z', operator: 'NotIn' as const, values: ['A-1', ''] }],
      },
    };
    expect(validateSecurityGroupPolicy(fine)).toBe(fine);
    // The CRD's bound and EC2's most per interface: 16 (EC2 holds the account to its quota when it creates the branch).
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `sg-${i + 1}`);
    const sixteen = { ...db, groupIds: ids(16) };
    expect(validateSecurityGroupPolicy(sixteen)).toBe(sixteen);
    // A group id's form is EC2's to check: the policy still selects, and EC2 refuses the branch (fail closed).
    const malformed = { ...db, groupIds: ['group-1'] };
    expect(validateSecurityGroupPolicy(malformed)).toBe(malformed);
    const bad = [
      { ...db, podSelector: undefined },
      { ...db, groupIds: [] },
      { ...db, groupIds: ids(17) },
      { ...db, groupIds: [''] },
      { ...db, groupIds: [7] },
      { ...db, podSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } },
      { ...db, podSelector: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] } },
      { ...db, podSelector: { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] } },
      { ...db, name: '' },
      // Shapes only a CRD without a schema lets through: refused, never a TypeError.
      { ...db, podSelector: { matchExpressions: { key: 'a', operator: 'Exists' } } },
      { ...db, podSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: 'db-client' }] } },
      { ...db, podSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: [1] }] } },
      { ...db, podSelector: { matchLabels: ['app=db-client'] } },
      { ...db, podSelector: null },
      // Keys and values LabelSelectorAsSelector refuses (the reference then skips the policy).
      { ...db, podSelector: { matchExpressions: [{ key: 'bad key', operator: 'DoesNotExist' }] } },
      { ...db, podSelector: { matchExpressions: [{ key: 'a/b/c', operator: 'Exists' }] } },
      { ...db, podSelector: { matchExpressions: [{ key: `${'k'.repeat(64)}`, operator: 'Exists' }] } },
      { ...db, podSelector: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['a b'] }] } },
      { ...db, podSelector: { matchLabels: { 'Example.com/app': 'x' } } },
      { ...db, podSelector: { matchLabels: { app: '-x' } } },
    ];
    for (const p of bad) {
      expect(() => validateSecurityGroupPolicy(p as SecurityGroupPolicy)).toThrow();
      try {
        validateSecurityGroupPolicy(p as SecurityGroupPolicy);
      } catch (error) {
        expect(isSgpError(error, 'INVALID_ARGUMENT')).toBe(true);
      }
    }
  });
});
