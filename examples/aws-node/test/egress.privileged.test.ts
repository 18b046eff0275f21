/**
 * egress-cni as the build ships it (the single executable in dist/bin), driven by Debian's libcni and chained
 * after Debian's ptp + host-local, in namespaces this test creates: a "node" namespace (libcni and every
 * plugin run there, through nsenter), pods, and a peer reachable from the node only at the node's own address
 * (it has no route back to the egress ranges), so a reply proves the SNAT.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  askPeer,
  buildLibcniRunner,
  createNamespaces,
  describePrivileged,
  inNs,
  Libcni,
  type LibcniAttachment,
  scratchDir,
  startPeerReporter,
  uniqueName,
} from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const binDir = fileURLToPath(new URL('../dist/bin', import.meta.url));

interface Setup {
  /** 4: an IPv6 cluster with IPv4 egress; 6: an IPv4 cluster with IPv6 egress. */
  egress: 4 | 6;
  /** The node's address facing the peer: the SNAT source. */
  nodeIp: string;
  peerIp: string;
  /** ptp's pod range (the cluster's family). */
  podRange: string;
  /** The egress IPAM range and default route, as the daemon's conflist has them. */
  egressRange: string;
  egressDst: string;
  podIf: 'v4if0' | 'v6if0';
}

const SETUPS: Setup[] = [
  {
    egress: 4,
    nodeIp: '192.0.2.1',
    peerIp: '192.0.2.2',
    podRange: '2001:db8:a::/64',
    egressRange: '169.254.172.0/22',
    egressDst: '0.0.0.0/0',
    podIf: 'v4if0',
  },
  {
    egress: 6,
    nodeIp: '2001:db8:ff::1',
    peerIp: '2001:db8:ff::2',
    podRange: '10.123.0.0/24',
    egressRange: 'fd00::ac:00/118',
    egressDst: '::/0',
    podIf: 'v6if0',
  },
];

describe.each(SETUPS)('egress-cni, IPv$egress egress', (setup) => {
  describePrivileged('through libcni after ptp + host-local', () => {
    const dir = scratchDir('vck-egress-');
    const node = uniqueName('vckeN');
    const peer = uniqueName('vckeP');
    const pods: string[] = [];
    const made: Array<() => void> = [];
    const egressIpam = join(dir.path, 'egress-ipam');
    let cni: Libcni;
    let stopPeer = () => {};
    const port = 18_000 + setup.egress;
    const v6 = setup.egress === 6;
    const save = v6 ? 'ip6tables-save' : 'iptables-save';

    function conflist(label: string, egress: Record<string, unknown> = {}, chained = true): string {
      const file = join(dir.path, `${label}.conflist`);
      const egressEntry = {
        name: 'egress-cni',
        type: 'egress-cni',
        mtu: '9001',
        enabled: 'true',
        randomizeSNAT: 'prng',
        nodeIP: setup.nodeIp,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: setup.egressRange }]],
          routes: [{ dst: setup.egressDst }],
          dataDir: egressIpam,
        },
        pluginLogFile: join(dir.path, `egress-v${setup.egress}-plugin.log`),
        pluginLogLevel: 'Debug',
        ...egress,
      };
      const ptp = {
        type: 'ptp',
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: setup.podRange }]],
          dataDir: join(dir.path, 'pod-ipam'),
        },
      };
      writeFileSync(
        file,
        JSON.stringify({
          cniVersion: '0.4.0',
          name: 'vck-egress',
          disableCheck: false,
          plugins: chained ? [ptp, egressEntry] : [egressEntry],
        }),
      );
      return file;
    }

    function newPod(): LibcniAttachment {
      const ns = uniqueName('vckep');
      made.push(createNamespaces([ns]));
      pods.push(ns);
      return { containerId: `ctr-${ns}`, netns: `/run/netns/${ns}`, ifname: 'eth0' };
    }
    const podNs = (a: LibcniAttachment) => a.netns.replace('/run/netns/', '');
    const natChains = () =>
      inNs(node, save, '-t', 'nat')
        .split('\n')
        .filter((l) => l.includes('CNI-E'));
    const egressAllocations = () =>
      existsSync(join(egressIpam, 'vck-egress'))
        ? readdirSync(join(egressIpam, 'vck-egress')).filter((f) => /^[0-9a-f.:]+$/.test(f))
        : [];

    beforeAll(async () => {
      if (!existsSync(join(binDir, 'egress-cni')))
        throw new Error(`build first: ${binDir}/egress-cni is missing`);
      const runner = await buildLibcniRunner();
      made.push(createNamespaces([node, peer]));
      cni = new Libcni(runner, [binDir, '/usr/lib/cni'], join(dir.path, 'cache'), `/run/netns/${node}`);
      // The node's link to the peer. The peer knows no route to the pod or egress ranges.
      const [a, b] = [uniqueName('vckeA'), uniqueName('vckeB')];
      inNs(node, 'ip', 'link', 'add', a, 'type', 'veth', 'peer', 'name', b, 'netns', `/run/netns/${peer}`);
      const len = v6 ? '64' : '24';
      inNs(node, 'ip', 'addr', 'add', `${setup.nodeIp}/${len}`, 'dev', a, ...(v6 ? ['nodad'] : []));
      inNs(peer, 'ip', 'addr', 'add', `${setup.peerIp}/${len}`, 'dev', b, ...(v6 ? ['nodad'] : []));
      inNs(node, 'ip', 'link', 'set', a, 'up');
      inNs(peer, 'ip', 'link', 'set', b, 'up');
      // What aws-vpc-cni-init sets on a node with IPv6 egress (the plugin turns IPv4 forwarding on itself).
      if (v6) inNs(node, 'sysctl', '-qw', 'net.ipv6.conf.all.forwarding=1');
      stopPeer = await startPeerReporter(peer, port, v6 ? '::' : '0.0.0.0');
    }, 180_000);

    afterAll(() => {
      stopPeer();
      for (const undo of made.reverse()) undo();
      dir.remove();
    });

    it('ADD: the egress interface, routes and SNAT chain; the peer sees the node address; CHECK; DEL twice removes everything', async () => {
      const file = conflist('main');
      const pod = newPod();
      const add = await cni.add(file, pod);
      expect(add).toMatchObject({ ok: true });
      const result = (add as { result: { interfaces: Array<Record<string, string>>; ips: unknown[] } })
        .result;
      // ptp's interfaces, then the egress veth's host end and pod end (the pod end in the sandbox); IPs are ptp's.
      expect(result.interfaces).toHaveLength(4);
      expect(result.interfaces[2]?.['name']).toMatch(/^veth[0-9a-f]{8}$/);
      expect(result.interfaces[3]).toMatchObject({ name: setup.podIf, sandbox: pod.netns });
      expect(result.ips).toHaveLength(1);

      const hostVeth = result.interfaces[2]!['name']!;
      const ns = podNs(pod);
      const podAddr = inNs(
        ns,
        'ip',
        '-o',
        `-${setup.egress}`,
        'addr',
        'show',
        'dev',
        setup.podIf,
        'scope',
        'global',
      );
      const egressIp = /inet6? ([0-9a-f.:]+)\//.exec(podAddr)?.[1];
      expect(egressIp).toBeDefined();
      if (v6) {
        expect(egressIp).toMatch(/^fd00::ac:/);
        expect(inNs(ns, 'cat', '/proc/sys/net/ipv6/conf/eth0/disable_ipv6').trim()).toBe('1');
        expect(inNs(ns, 'ip', '-6', 'route', 'show', 'default')).toMatch(
          new RegExp(`via fe80:\\S+ dev ${setup.podIf}`),
        );
        expect(inNs(node, 'ip', '-6', 'route', 'show', `${egressIp}/128`)).toContain(`dev ${hostVeth}`);
      } else {
        expect(egressIp).toMatch(/^169\.254\.17[2-5]\./);
        const routes = inNs(ns, 'ip', '-4', 'route', 'show');
        expect(routes).toContain(`default via 169.254.172.1 dev v4if0`);
        expect(routes).toContain(`169.254.172.0/22 via 169.254.172.1 dev v4if0 src ${egressIp}`);
        expect(routes).toContain(`169.254.172.1 dev v4if0 scope link src ${egressIp}`);
        expect(inNs(node, 'ip', '-4', 'addr', 'show', 'dev', hostVeth)).toContain(
          'inet 169.254.172.1/32 scope link',
        );
        expect(inNs(node, 'ip', '-4', 'route', 'show', `${egressIp}/32`)).toContain(
          `dev ${hostVeth} scope link`,
        );
      }

      // The reference's chain name and comment (the network name is the list's, as libcni passes it).
      const comment = `"name: \\"vck-egress\\" id: \\"${pod.containerId}\\""`;
      const chains = natChains();
      const chain = /:(CNI-E\d-[0-9a-f]{21}) /.exec(chains.join('\n'))?.[1];
      expect(chain).toBeDefined();
      expect(chain!.startsWith(`CNI-E${setup.egress}-`)).toBe(true);
      expect(chains).toEqual(
        expect.arrayContaining([
          `-A POSTROUTING -s ${egressIp}/${v6 ? 128 : 32} -m comment --comment ${comment} -j ${chain}`,
          `-A ${chain} -d ${v6 ? 'ff00::/8' : '224.0.0.0/4'} -m comment --comment ${comment} -j ACCEPT`,
          `-A ${chain} -m comment --comment ${comment} -j SNAT --to-source ${setup.nodeIp} --random-fully`,
        ]),
      );

      // The pod's traffic to the peer leaves with the node's address (the peer could not answer anything else).
      expect(askPeer(ns, setup.peerIp, port)).toBe(v6 ? setup.nodeIp : setup.nodeIp);

      expect(await cni.check(file, pod)).toEqual({ ok: true });
      expect(egressAllocations()).toHaveLength(1);

      expect(await cni.del(file, pod)).toEqual({ ok: true });
      expect(natChains()).toEqual([]);
      expect(inNs(ns, 'ip', '-o', 'link', 'show')).not.toContain(setup.podIf);
      expect(inNs(node, 'ip', '-o', 'link', 'show')).not.toContain(hostVeth);
      expect(inNs(node, 'ip', `-${setup.egress}`, 'route', 'show')).not.toContain(egressIp!);
      expect(egressAllocations()).toEqual([]);
      expect(await cni.del(file, pod)).toEqual({ ok: true });
    }, 60_000);

    it.each([
      ['hashrandom', ' --random'],
      ['none', ''],
    ])(
      'randomizeSNAT=%s ends the SNAT rule with "%s"',
      async (mode, flag) => {
        const file = conflist(`random-${mode}`, { randomizeSNAT: mode });
        const pod = newPod();
        expect(await cni.add(file, pod)).toMatchObject({ ok: true });
        const snat = natChains().find((l) => l.includes('-j SNAT'));
        expect(snat?.endsWith(`--to-source ${setup.nodeIp}${flag}`)).toBe(true);
        expect(await cni.del(file, pod)).toEqual({ ok: true });
        expect(natChains()).toEqual([]);
      },
      60_000,
    );

    it('enabled "false": the previous result passes through and nothing is made', async () => {
      const file = conflist('disabled', { enabled: 'false' });
      const pod = newPod();
      const add = await cni.add(file, pod);
      expect(add).toMatchObject({ ok: true });
      expect((add as { result: { interfaces: unknown[] } }).result.interfaces).toHaveLength(2);
      expect(inNs(podNs(pod), 'ip', '-o', 'link', 'show')).not.toContain(setup.podIf);
      expect(natChains()).toEqual([]);
      expect(await cni.del(file, pod)).toEqual({ ok: true });
    }, 60_000);

    it('CHECK names what is missing once the egress interface is gone', async () => {
      const file = conflist('check');
      const pod = newPod();
      expect(await cni.add(file, pod)).toMatchObject({ ok: true });
      inNs(podNs(pod), 'ip', 'link', 'del', setup.podIf);
      expect(await cni.check(file, pod)).toEqual({
        ok: false,
        error: expect.objectContaining({ code: 999, msg: `check: no ${setup.podIf} in the pod` }),
      });
      expect(await cni.del(file, pod)).toEqual({ ok: true });
      expect(natChains()).toEqual([]);
    }, 60_000);

    it.each([
      [
        'randomizeSNAT',
        { randomizeSNAT: 'fully' },
        7,
        'invalid network config: randomizeSNAT: must be prng, hashrandom or none',
      ],
      ['mtu', { mtu: 'jumbo' }, 7, 'invalid network config: mtu: must be a decimal string'],
      ['nodeIP', { nodeIP: 'node-1' }, 7, 'invalid network config: nodeIP: not an IP address'],
      [
        'a link-local IPv6 nodeIP',
        { nodeIP: 'fe80::1' },
        7,
        'global unicast IPv6 not found in host primary interface which is mandatory to support IPv6 egress',
      ],
    ])(
      'bad %s: a typed CNI error, and no interface, chain or address taken',
      async (_what, bad, code, msg) => {
        const file = conflist(`bad-${Object.keys(bad)[0]}-${String(Object.values(bad)[0])}`, bad);
        const pod = newPod();
        expect(await cni.add(file, pod)).toEqual({
          ok: false,
          error: expect.objectContaining({ code, msg }),
        });
        expect(inNs(podNs(pod), 'ip', '-o', 'link', 'show')).not.toMatch(/v[46]if0/);
        expect(natChains()).toEqual([]);
        expect(egressAllocations()).toEqual([]);
      },
      60_000,
    );

    it.runIf(setup.egress === 4)(
      'a failure half-way (the pod already has a default route) rolls back the interface, the chain and the address',
      async () => {
        const file = conflist('rollback');
        const pod = newPod();
        const ns = podNs(pod);
        inNs(ns, 'ip', 'link', 'add', 'side0', 'type', 'veth', 'peer', 'name', 'side1');
        inNs(ns, 'ip', 'addr', 'add', '198.51.100.2/24', 'dev', 'side0');
        inNs(ns, 'ip', 'link', 'set', 'side0', 'up');
        inNs(ns, 'ip', 'route', 'add', 'default', 'via', '198.51.100.1');
        const linksBefore = inNs(node, 'ip', '-o', 'link', 'show').split('\n').length;
        const add = await cni.add(file, pod);
        expect(add).toEqual({ ok: false, error: expect.objectContaining({ code: 999 }) });
        expect(inNs(ns, 'ip', '-o', 'link', 'show')).not.toContain('v4if0');
        // ptp's host veth stays (libcni does not undo earlier plugins); egress-cni's is gone.
        expect(inNs(node, 'ip', '-o', 'link', 'show').split('\n').length).toBe(linksBefore + 1);
        expect(natChains()).toEqual([]);
        expect(egressAllocations()).toEqual([]);
        expect(await cni.del(file, pod)).toEqual({ ok: true });
      },
      60_000,
    );

    it('alone, not chained: "must be called as a chained plugin"', async () => {
      const pod = newPod();
      expect(await cni.add(conflist('alone', {}, false), pod)).toEqual({
        ok: false,
        error: expect.objectContaining({ code: 7, msg: 'must be called as a chained plugin' }),
      });
      expect(egressAllocations()).toEqual([]);
    }, 60_000);
  });
});
