import { describe, expect, it } from 'vitest';
import { parseEniConfig, resolveEniConfigName } from '../src/index.js';

describe('ENIConfig resolution for a node (first match wins)', () => {
  const zone = { labelKey: 'topology.kubernetes.io/zone' };

  it('prefers the external label, then the annotation, then the label, then default', () => {
    const all = {
      labels: {
        'vpc.amazonaws.com/externalEniConfig': 'external',
        'topology.kubernetes.io/zone': 'us-west-2a',
      },
      annotations: { 'k8s.amazonaws.com/eniConfig': 'annotated' },
    };
    expect(resolveEniConfigName(all, zone)).toEqual({ name: 'external', source: 'external-label' });
    const { 'vpc.amazonaws.com/externalEniConfig': _, ...labels } = all.labels;
    expect(resolveEniConfigName({ ...all, labels }, zone)).toEqual({
      name: 'annotated',
      source: 'annotation',
    });
    expect(resolveEniConfigName({ labels }, zone)).toEqual({ name: 'us-west-2a', source: 'label' });
    expect(resolveEniConfigName({ labels: {} }, zone)).toEqual({ name: 'default', source: 'default' });
    expect(resolveEniConfigName({})).toEqual({ name: 'default', source: 'default' });
  });

  it('uses the configured keys (ENI_CONFIG_ANNOTATION_DEF / ENI_CONFIG_LABEL_DEF) and the reference defaults', () => {
    expect(resolveEniConfigName({ labels: { 'k8s.amazonaws.com/eniConfig': 'by-default-label' } })).toEqual({
      name: 'by-default-label',
      source: 'label',
    });
    expect(
      resolveEniConfigName(
        { annotations: { 'example.com/pods': 'pods-a', 'k8s.amazonaws.com/eniConfig': 'ignored' } },
        { annotationKey: 'example.com/pods' },
      ),
    ).toEqual({ name: 'pods-a', source: 'annotation' });
    // An empty value names nothing.
    expect(resolveEniConfigName({ labels: { 'topology.kubernetes.io/zone': '' } }, zone).source).toBe(
      'default',
    );
  });
});

describe('ENIConfig objects', () => {
  it('accepts spec.subnet with optional security groups', () => {
    expect(
      parseEniConfig({
        spec: { subnet: 'subnet-0a640000000000001', securityGroups: ['sg-0a000000000000001'] },
      }),
    ).toEqual({
      ok: true,
      spec: { subnet: 'subnet-0a640000000000001', securityGroups: ['sg-0a000000000000001'] },
    });
    expect(parseEniConfig({ spec: { subnet: 'subnet-0a640000000000001' } })).toEqual({
      ok: true,
      spec: { subnet: 'subnet-0a640000000000001', securityGroups: [] },
    });
  });

  it('names the one problem of a bad object', () => {
    expect(parseEniConfig(undefined)).toEqual({ ok: false, problem: 'has no spec' });
    expect(parseEniConfig({ spec: { subnet: 'nope' } })).toMatchObject({ ok: false });
    expect(
      parseEniConfig({ spec: { subnet: 'subnet-0a640000000000001', securityGroups: 'sg-1' } }),
    ).toMatchObject({ ok: false, problem: expect.stringContaining('securityGroups') });
    // Up to 16 go to EC2, which holds each account to its own quota (5 unless raised); 17 never can be right.
    const groups = (n: number) =>
      Array.from({ length: n }, (_, i) => `sg-0a0000000000000${i.toString(16).padStart(2, '0')}`);
    expect(
      parseEniConfig({ spec: { subnet: 'subnet-0a640000000000001', securityGroups: groups(16) } }),
    ).toMatchObject({ ok: true });
    expect(
      parseEniConfig({ spec: { subnet: 'subnet-0a640000000000001', securityGroups: groups(17) } }),
    ).toEqual({
      ok: false,
      problem: 'spec.securityGroups lists 17 groups, more than EC2 allows on an ENI (16)',
    });
  });
});
