import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isNetlinkError, type NetlinkHandle, open, openSync } from '../src/index.js';
import { type Scratch, scratchNamespaces } from './ns.js';

/** Counts event-loop turns (setImmediate callbacks) until `p` settles. */
async function ticksDuring<T>(p: Promise<T>): Promise<{ value: T; ticks: number }> {
  let ticks = 0;
  let done = false;
  const spin = () => {
    if (done) return;
    ticks++;
    setImmediate(spin);
  };
  setImmediate(spin);
  try {
    return { value: await p, ticks };
  } finally {
    done = true;
  }
}

describePrivileged('async handle', () => {
  let ns: Scratch;
  let h: NetlinkHandle;

  beforeAll(async () => {
    ns = scratchNamespaces(2);
    h = await open({ netns: ns.paths[0]! });
  });

  afterAll(() => {
    h?.close();
    expect(ns.remove()).toEqual([]);
  });

  it('round-trips links, addresses, routes, rules and neighbours', async () => {
    await h.linkSet('lo', { up: true });
    await h.linkAdd({ kind: 'veth', name: 'x0', up: true, peer: { name: 'x1' } });
    await h.linkSet('x1', { up: true });
    await h.addrAdd({ dev: 'x0', address: '10.30.0.1/24' });
    await h.routeAdd({ dst: '10.31.0.0/16', gateway: '10.30.0.2', table: 300 });
    await h.ruleAdd({ from: '10.30.0.0/24', priority: 700, table: 300 });
    await h.neighAdd({ dev: 'x0', address: '10.30.0.2', lladdr: '02:00:00:00:30:02' });
    const [links, addrs, routes, rules, neighs] = await Promise.all([
      h.linkList({ kind: 'veth' }),
      h.addrList({ dev: 'x0', family: 4 }),
      h.routeList({ table: 300 }),
      h.ruleList({ table: 300 }),
      h.neighList({ dev: 'x0' }),
    ]);
    expect(links.map((l) => l.name).sort()).toEqual(['x0', 'x1']);
    expect(addrs.map((a) => a.cidr)).toEqual(['10.30.0.1/24']);
    expect(routes.map((r) => [r.dst, r.gateway])).toEqual([['10.31.0.0/16', '10.30.0.2']]);
    expect(rules.map((r) => [r.priority, r.from])).toEqual([[700, '10.30.0.0/24']]);
    expect(neighs.filter((n) => n.state === 0x80).map((n) => n.lladdr)).toEqual(['02:00:00:00:30:02']);
    await h.ruleDel({ priority: 700 });
    await h.routeDel({ dst: '10.31.0.0/16', table: 300 });
    await h.neighDel({ dev: 'x0', address: '10.30.0.2' });
    await h.addrDel({ dev: 'x0', address: '10.30.0.1/24' });
    await h.linkDel('x0');
    expect(await h.linkList()).toEqual([expect.objectContaining({ name: 'lo' })]);
    await expect(h.linkGet('x0')).rejects.toSatisfy((e) => isNetlinkError(e, 'ENODEV'));
  });

  it('keeps the event loop running while the kernel deletes a link', async () => {
    for (let i = 0; i < 3; i++) {
      await h.linkAdd({ kind: 'veth', name: `slow${i}`, peer: { name: `slowp${i}`, netns: ns.paths[1]! } });
    }
    // A veth delete (and a namespace move) runs 17–35 ms inside send(); the async path does it on koffi's
    // worker thread, so setImmediate callbacks keep firing meanwhile.
    const { ticks } = await ticksDuring(Promise.all([0, 1, 2].map((i) => h.linkDel(`slow${i}`))));
    expect(ticks).toBeGreaterThan(0);
    await h.linkAdd({ kind: 'veth', name: 'mv0', peer: { name: 'mvp0' } });
    const moved = await ticksDuring(h.linkSet('mv0', { netns: ns.paths[1]! }));
    expect(moved.ticks).toBeGreaterThan(0);
    const other = openSync({ netns: ns.paths[1]! });
    try {
      expect(other.linkGet('mv0').kind).toBe('veth');
      other.linkDel('mv0');
    } finally {
      other.close();
    }
  });

  it('the sync path, by contrast, blocks the loop for the whole operation', async () => {
    const s = openSync({ netns: ns.paths[0]! });
    try {
      s.linkAdd({ kind: 'veth', name: 'blk0', peer: { name: 'blkp0' } });
      const { ticks } = await ticksDuring(Promise.resolve().then(() => s.linkDel('blk0')));
      expect(ticks).toBe(0);
    } finally {
      s.close();
    }
  });

  it('reports kernel errors with errno and extended ACK, and CLOSED after close', async () => {
    const err = await h.linkAdd({ kind: 'veth', name: 'lo', peer: { name: 'lp' } }).catch((e) => e);
    expect(isNetlinkError(err, 'EEXIST')).toBe(true);
    expect(err).toMatchObject({ op: 'link.add', errno: 17 });
    const other = await open({ netns: ns.paths[1]! });
    other.close();
    await expect(other.linkList()).rejects.toSatisfy((e) => isNetlinkError(e, 'CLOSED'));
  });
});
