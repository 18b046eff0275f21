import { execFileSync } from 'node:child_process';
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openSync, sysctlRead, sysctlWrite } from '../src/index.js';
import { type Scratch, scratchNamespaces } from './ns.js';

// The VPC CNI pod network, built the way the aws-cni plugin does it (sync handles, one-shot style):
//   host ns:  veth "eni…" (peer created directly in the pod ns as eth0), /32 host route to the pod,
//             rule "to POD lookup main" at 512 and "from POD lookup 1001" at 1536
//   pod ns:   eth0 with POD/32, 169.254.1.1 link-scope route, default via 169.254.1.1,
//             permanent neighbour 169.254.1.1 → host veth MAC
// "host" here is a namespace this test creates; the machine's root namespace is never touched.
const POD = '10.20.0.7';
const NODE = '10.20.255.1';

describePrivileged('VPC CNI pod layout end to end', () => {
  let ns: Scratch;
  let hostPath: string;
  let podPath: string;

  beforeAll(() => {
    ns = scratchNamespaces(2);
    [hostPath, podPath] = ns.paths as [string, string];
  });

  afterAll(() => {
    expect(ns.remove()).toEqual([]);
  });

  it('plumbs the pod, pings across, and tears down', () => {
    const host = openSync({ netns: hostPath });
    const pod = openSync({ netns: podPath });
    try {
      host.linkSet('lo', { up: true });
      host.addrAdd({ dev: 'lo', address: `${NODE}/32` });

      host.linkAdd({
        kind: 'veth',
        name: 'eni0a1b2c3d4e5',
        up: true,
        mtu: 9001,
        peer: { name: 'eth0', netns: podPath },
      });
      const hostVeth = host.linkGet('eni0a1b2c3d4e5');

      pod.linkSet('lo', { up: true });
      pod.linkSet('eth0', { up: true });
      pod.addrAdd({ dev: 'eth0', address: `${POD}/32` });
      pod.routeAdd({ dst: '169.254.1.1', dev: 'eth0', scope: 'link' });
      pod.routeAdd({ dst: 'default', gateway: '169.254.1.1', dev: 'eth0' });
      pod.neighAdd({ dev: 'eth0', address: '169.254.1.1', lladdr: hostVeth.address!, state: 'permanent' });

      host.routeAdd({ dst: `${POD}/32`, dev: hostVeth.index, scope: 'link' });
      host.ruleAdd({ to: `${POD}/32`, priority: 512, table: 'main' });
      host.ruleAdd({ from: `${POD}/32`, priority: 1536, table: 1001 });
      host.routeAdd({ dst: 'default', dev: hostVeth.index, table: 1001, scope: 'link' });
      sysctlWrite(`net/ipv4/conf/${hostVeth.name}/proxy_arp`, 1, { netns: hostPath });
      expect(sysctlRead(`net/ipv4/conf/${hostVeth.name}/proxy_arp`, { netns: hostPath })).toBe('1');

      // What iproute2 sees agrees with what we built.
      const podRoutes = execFileSync('ip', ['-n', ns.names[1]!, 'route'], { encoding: 'utf8' });
      expect(podRoutes).toContain('default via 169.254.1.1 dev eth0');
      expect(podRoutes).toContain('169.254.1.1 dev eth0 scope link');
      const rules = execFileSync('ip', ['-n', ns.names[0]!, 'rule'], { encoding: 'utf8' });
      expect(rules).toContain(`512:\tfrom all to ${POD} lookup main`);
      expect(rules).toContain(`1536:\tfrom ${POD} lookup 1001`);
      const neigh = execFileSync('ip', ['-n', ns.names[1]!, 'neigh'], { encoding: 'utf8' });
      expect(neigh).toContain(`169.254.1.1 dev eth0 lladdr ${hostVeth.address} PERMANENT`);

      // Traffic both ways across the veth.
      const ping = (nsName: string, to: string) =>
        execFileSync('ip', ['netns', 'exec', nsName, 'ping', '-c', '1', '-W', '2', to], { encoding: 'utf8' });
      expect(ping(ns.names[0]!, POD)).toMatch(/1 received/);
      expect(ping(ns.names[1]!, NODE)).toMatch(/1 received/);

      // Teardown the way a CNI DEL does: host side rules and routes, then the veth (takes the pod end too).
      host.ruleDel({ to: `${POD}/32`, priority: 512 });
      host.ruleDel({ from: `${POD}/32`, priority: 1536 });
      host.routeDel({ dst: `${POD}/32`, dev: hostVeth.index });
      host.linkDel(hostVeth.index);
      expect(host.linkList({ kind: 'veth' })).toEqual([]);
      expect(pod.linkList().map((l) => l.name)).toEqual(['lo']);
      expect(host.ruleList({ family: 4 }).filter((r) => r.priority === 512 || r.priority === 1536)).toEqual(
        [],
      );
    } finally {
      host.close();
      pod.close();
    }
  });
});
