import { describe, expect, it } from 'vitest';
import {
  addEgressSnat,
  type Command,
  deleteEgressSnat,
  diffEgressSnat,
  egressChainName,
  egressComment,
  egressSnatInPlace,
  isSnatError,
  planEgressSnat,
  readEgressNat,
} from '../src/index.js';
import { FakeNetfilter } from '../src/testing/index.js';

const tools = (fake: FakeNetfilter) => ({ runner: fake });
const v4 = { network: 'egress-cni', containerId: 'ctr1', podIp: '169.254.172.5', nodeIp: '10.0.0.9' };

describe('egress SNAT names', () => {
  it('formats chain names as the upstream plugins do (28 characters, SHA-512 of name + id)', () => {
    // Upstream FormatChainName("test", "1234") is "CNI-2bbe0c48b91a7d1b8a6753a8"; the E4-/E6- prefixes
    // take the place of the first hex digits.
    expect(egressChainName('test', '1234', 4)).toBe('CNI-E4-2bbe0c48b91a7d1b8a675');
    expect(egressChainName('test', '1234', 6)).toBe('CNI-E6-2bbe0c48b91a7d1b8a675');
    expect(egressChainName('egress-cni', 'a'.repeat(64), 4)).toHaveLength(28);
  });

  it('formats the comment as Go %q does for the names CNI allows', () => {
    expect(egressComment('egress-cni', 'ctr1')).toBe('name: "egress-cni" id: "ctr1"');
  });
});

describe('planEgressSnat', () => {
  it('plans the multicast ACCEPT, the SNAT and the POSTROUTING jump with the comment', () => {
    const plan = planEgressSnat(v4);
    const c = '"name: \\"egress-cni\\" id: \\"ctr1\\""';
    expect(plan).toEqual({
      family: 4,
      chain: egressChainName('egress-cni', 'ctr1', 4),
      rules: [
        `-d 224.0.0.0/4 -m comment --comment ${c} -j ACCEPT`,
        `-m comment --comment ${c} -j SNAT --to-source 10.0.0.9 --random-fully`,
      ],
      jump: `-s 169.254.172.5/32 -m comment --comment ${c} -j ${plan.chain}`,
    });
  });

  it('plans IPv6 with ff00::/8 and a /128 source', () => {
    const plan = planEgressSnat({ ...v4, podIp: 'fd00::ac:2', nodeIp: '2600:1f14::10' });
    expect(plan.family).toBe(6);
    expect(plan.chain.startsWith('CNI-E6-')).toBe(true);
    expect(plan.rules[0]).toMatch(/^-d ff00::\/8 /);
    expect(plan.rules[1]).toMatch(/-j SNAT --to-source 2600:1f14::10 --random-fully$/);
    expect(plan.jump).toMatch(/^-s fd00::ac:2\/128 /);
  });

  it.each([
    ['prng', true, ' --random-fully'],
    ['prng', false, ' --random'],
    ['hashrandom', true, ' --random'],
    ['none', true, ''],
  ] as const)(
    'randomizeSNAT=%s (random-fully supported: %s) ends the SNAT rule with "%s"',
    (mode, rf, end) => {
      const rule = planEgressSnat({ ...v4, randomizeSnat: mode, randomFullySupported: rf }).rules[1]!;
      expect(rule.endsWith(`--to-source 10.0.0.9${end}`)).toBe(true);
    },
  );

  it.each([
    [{ podIp: '169.254.172.500' }, 'podIp'],
    [{ nodeIp: 'fd00::1' }, 'nodeIp'],
    [{ containerId: '' }, 'containerId'],
    [{ randomizeSnat: 'fully' as never }, 'randomizeSnat'],
  ])('rejects %j with INVALID_OPTION naming %s', (bad, subject) => {
    let caught: unknown;
    try {
      planEgressSnat({ ...v4, ...bad });
    } catch (e) {
      caught = e;
    }
    expect(isSnatError(caught, 'INVALID_OPTION')).toBe(true);
    expect((caught as { subject: string }).subject).toBe(subject);
  });
});

describe('addEgressSnat / deleteEgressSnat on the netfilter fake', () => {
  it('installs once, is a no-op when repeated, and removes chain and jump (twice without error)', async () => {
    const fake = new FakeNetfilter();
    fake.restore('*nat\n:OTHER - [0:0]\n-A OTHER -j RETURN\n-A POSTROUTING -j OTHER\nCOMMIT\n');
    const { plan, processes } = await addEgressSnat(tools(fake), v4);
    expect(plan).toEqual(planEgressSnat(v4));
    expect(processes).toBe(2);
    expect(fake.rules('nat', plan.chain)).toEqual(plan.rules);
    expect(fake.rules('nat', 'POSTROUTING')).toEqual(['-j OTHER', plan.jump]);
    expect(await egressSnatInPlace(tools(fake), plan)).toBe(true);

    expect((await addEgressSnat(tools(fake), v4)).processes).toBe(1); // read only
    expect(fake.rules('nat', 'POSTROUTING')).toHaveLength(2);

    expect(await deleteEgressSnat(tools(fake), plan.chain, 4)).toBe(2);
    expect(fake.tables.get('nat')?.has(plan.chain)).toBe(false);
    expect(fake.rules('nat', 'POSTROUTING')).toEqual(['-j OTHER']);
    expect(fake.rules('nat', 'OTHER')).toEqual(['-j RETURN']);
    expect(await deleteEgressSnat(tools(fake), plan.chain, 4)).toBe(1);
    expect(await egressSnatInPlace(tools(fake), plan)).toBe(false);
  });

  it('egressSnatInPlace checks several plans against one read it is handed', async () => {
    const fake = new FakeNetfilter();
    const random = planEgressSnat({ ...v4, randomFullySupported: false });
    await addEgressSnat(tools(fake), { ...v4, randomFullySupported: false });
    const saves = () => fake.calls.filter((c) => c.file === 'iptables-save').length;
    const before = saves();
    const read = readEgressNat(tools(fake), 4);
    expect(await egressSnatInPlace(tools(fake), planEgressSnat(v4), read)).toBe(false);
    expect(await egressSnatInPlace(tools(fake), random, read)).toBe(true);
    expect(saves() - before).toBe(1);
    const v6read = Promise.resolve({ family: 6 as const, nat: undefined, header: undefined });
    await expect(egressSnatInPlace(tools(fake), random, v6read)).rejects.toSatisfy((e) =>
      isSnatError(e, 'INVALID_OPTION'),
    );
  });

  it('repairs a chain whose rules drifted and a jump with another source', async () => {
    const fake = new FakeNetfilter();
    const plan = planEgressSnat(v4);
    fake.restore(
      `*nat\n:${plan.chain} - [0:0]\n-A ${plan.chain} -j ACCEPT\n-A POSTROUTING -s 169.254.172.9/32 -j ${plan.chain}\nCOMMIT\n`,
    );
    await addEgressSnat(tools(fake), v4);
    expect(fake.rules('nat', plan.chain)).toEqual(plan.rules);
    expect(fake.rules('nat', 'POSTROUTING')).toEqual([plan.jump]);
  });

  it('reports a failed restore as COMMAND_FAILED and leaves nat as it was', async () => {
    const fake = new FakeNetfilter();
    fake.failNext('iptables-restore', 2, 'locked');
    const plan = planEgressSnat(v4);
    await expect(addEgressSnat(tools(fake), v4)).rejects.toMatchObject({
      code: 'COMMAND_FAILED',
      subject: 'iptables-restore',
    });
    expect(fake.tables.get('nat')?.has(plan.chain)).toBe(false);
  });

  it('takes --random-fully support from the save header, else from iptables --version', async () => {
    const old = new FakeNetfilter('iptables v1.6.1');
    const { plan, processes } = await addEgressSnat(tools(old), v4);
    expect(processes).toBe(2);
    expect(plan.rules[1]).toMatch(/ --random$/);

    // A save without its header: one more process asks iptables itself.
    const fake = new FakeNetfilter('iptables v1.8.9 (legacy)');
    const headless = {
      async run(c: Command) {
        const r = await fake.run(c);
        return c.file === 'iptables-save' ? { ...r, stdout: r.stdout.replace(/^#.*\n/gm, '') } : r;
      },
    };
    const second = await addEgressSnat({ runner: headless }, v4);
    expect(second.processes).toBe(3);
    expect(second.plan.rules[1]).toMatch(/ --random-fully$/);
    expect(fake.calls.map((c) => c.file)).toEqual(['iptables-save', 'iptables', 'iptables-restore']);
  });

  it('takes a read started earlier, and refuses one of the other family', async () => {
    const fake = new FakeNetfilter();
    const read = readEgressNat(tools(fake), 4);
    const { processes } = await addEgressSnat(tools(fake), v4, read);
    expect(processes).toBe(2);
    expect(fake.calls.map((c) => c.file)).toEqual(['iptables-save', 'iptables-restore']);
    await expect(
      addEgressSnat(
        tools(fake),
        { ...v4, podIp: 'fd00::ac:2', nodeIp: '2600::1' },
        readEgressNat(tools(fake), 4),
      ),
    ).rejects.toMatchObject({ code: 'INVALID_OPTION', subject: 'read' });
  });

  it('diffEgressSnat yields nothing for a nat table that already matches', () => {
    const plan = planEgressSnat(v4);
    const nat = {
      name: 'nat',
      chains: [
        { name: 'POSTROUTING', builtin: true },
        { name: plan.chain, builtin: false },
      ],
      rules: [
        { chain: 'POSTROUTING', spec: plan.jump },
        ...plan.rules.map((spec) => ({ chain: plan.chain, spec })),
      ],
    };
    expect(diffEgressSnat(plan, nat)).toBeUndefined();
  });
});
