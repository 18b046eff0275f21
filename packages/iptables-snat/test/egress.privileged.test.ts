import { createNamespaces, describePrivileged, inNs, uniqueName } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  addEgressSnat,
  deleteEgressSnat,
  egressSnatInPlace,
  planEgressSnat,
  processRunner,
  type SnatTools,
} from '../src/index.js';

describePrivileged('egress SNAT chains in a real network namespace', () => {
  const ns = uniqueName('vcke');
  let cleanup = () => {};
  let tools: SnatTools;

  beforeAll(() => {
    cleanup = createNamespaces([ns]);
    tools = { runner: processRunner({ netnsPath: `/var/run/netns/${ns}` }) };
  });
  afterAll(() => cleanup());

  it.each([
    [4, { podIp: '169.254.172.7', nodeIp: '10.0.0.9' }, 'iptables-save'],
    [6, { podIp: 'fd00::ac:7', nodeIp: '2600:1f14:aa::10' }, 'ip6tables-save'],
  ] as const)(
    'IPv%s: what we plan is what iptables-save prints back, so a repeated ADD reads and applies nothing',
    async (family, ips, save) => {
      const options = { network: 'egress-cni', containerId: `ctr-${family}`, ...ips };
      const { plan, processes } = await addEgressSnat(tools, options);
      expect(processes).toBe(2); // the version comes from the save's header
      expect(plan).toEqual(planEgressSnat({ ...options, randomFullySupported: true }));
      const saved = inNs(ns, save, '-t', 'nat');
      expect(saved).toContain(`-A POSTROUTING ${plan.jump}`);
      for (const rule of plan.rules) expect(saved).toContain(`-A ${plan.chain} ${rule}`);
      expect((await addEgressSnat(tools, options)).processes).toBe(1);
      expect(await egressSnatInPlace(tools, plan)).toBe(true);

      expect(await deleteEgressSnat(tools, plan.chain, family)).toBe(2);
      expect(inNs(ns, save, '-t', 'nat')).not.toContain(plan.chain);
      expect(await deleteEgressSnat(tools, plan.chain, family)).toBe(1);
    },
  );
});
