import * as addr from '../src/ops/addr.js';
import type { Op } from '../src/ops/driver.js';
import * as link from '../src/ops/link.js';
import * as neigh from '../src/ops/neigh.js';
import * as route from '../src/ops/route.js';
import * as rule from '../src/ops/rule.js';
import fixture from './fixtures/iproute2-requests.json' with { type: 'json' };
import { describeGolden } from './helpers.js';

// Request bytes captured from iproute2 itself (scripts/capture-iproute2.mjs: `strace -e write=all ip …`).
// Each case builds the same request through our operations; the last request must match byte for byte
// (sequence number and port id aside). vlan is refused by this kernel (no 8021q) but iproute2 still sent it.
const idx = fixture.indexes as Record<string, number>;
const v0 = idx['v0']!;

const cases: Record<string, () => Op<unknown>> = {
  veth: () => link.linkAdd({ kind: 'veth', name: 'hv0', peer: { name: 'pv0' } }),
  'veth-mtu-up': () =>
    link.linkAdd({ kind: 'veth', name: 'hv1', mtu: 9001, up: true, peer: { name: 'pv1' } }),
  bridge: () => link.linkAdd({ kind: 'bridge', name: 'br0' }),
  vlan: () => link.linkAdd({ kind: 'vlan', name: 'v0.5', parent: v0, id: 5 }),
  'vlan-8021ad': () => link.linkAdd({ kind: 'vlan', name: 'v0.6', parent: v0, id: 6, protocol: '802.1ad' }),
  'link-down': () => link.linkSet(v0, { up: false }),
  'link-up': () => link.linkSet(v0, { up: true }),
  'link-mtu': () => link.linkSet(v0, { mtu: 9001 }),
  'link-mac': () => link.linkSet(v0, { address: '02:00:00:00:00:aa' }),
  'link-master': () => link.linkSet(idx['v1']!, { master: idx['br0']! }),
  'link-del': () => link.linkDel(idx['hv0']!),
  'addr-add': () => addr.addrAdd({ dev: v0, address: '10.0.0.5/32' }),
  'addr-add6': () => addr.addrAdd({ dev: v0, address: '2001:db8::5/64', nodad: true }),
  'addr-del': () => addr.addrDel({ dev: v0, address: '10.0.0.5/32' }),
  'route-link': () => route.routeAdd({ dst: '169.254.1.1', dev: v0, scope: 'link' }),
  'route-default': () => route.routeAdd({ dst: 'default', gateway: '169.254.1.1', dev: v0 }),
  'route-table': () => route.routeAdd({ table: 1000, dst: '10.1.0.0/24', gateway: '169.254.1.1', dev: v0 }),
  'route-table-small': () =>
    route.routeReplace({ table: 100, dst: '10.1.0.0/24', gateway: '169.254.1.1', dev: v0 }),
  'route-onlink': () => route.routeAdd({ dst: '10.2.0.0/24', gateway: '192.0.2.1', dev: v0, onlink: true }),
  'route-src-metric': () => route.routeAdd({ dst: '10.3.0.0/24', src: '10.0.0.5', metric: 50, dev: v0 }),
  route6: () => route.routeAdd({ dst: '2001:db8:1::/64', gateway: 'fe80::1', dev: v0 }),
  'route-del': () => route.routeDel({ table: 1000, dst: '10.1.0.0/24', gateway: '169.254.1.1', dev: v0 }),
  'rule-from': () => rule.ruleAdd({ from: '10.0.0.5/32', priority: 1536, table: 1000 }),
  'rule-to': () => rule.ruleAdd({ to: '10.0.0.5/32', priority: 512, table: 'main' }),
  'rule-fwmark': () => rule.ruleAdd({ priority: 1024, fwmark: 0x80, fwmask: 0x80, table: 'main' }),
  'rule-iif': () => rule.ruleAdd({ priority: 100, iif: 'v0', table: 100 }),
  'rule-oif6': () => rule.ruleAdd({ family: 6, priority: 101, oif: 'v0', table: 100 }),
  'rule-del': () => rule.ruleDel({ from: '10.0.0.5/32', priority: 1536, table: 1000 }),
  'neigh-add': () =>
    neigh.neighAdd({ dev: v0, address: '169.254.1.1', lladdr: '02:00:00:00:00:01', state: 'permanent' }),
  'neigh-replace': () => neigh.neighReplace({ dev: v0, address: '169.254.1.1', lladdr: '02:00:00:00:00:02' }),
  'neigh-add6': () => neigh.neighAdd({ dev: v0, address: 'fe80::2', lladdr: '02:00:00:00:00:03' }),
  'neigh-del': () => neigh.neighDel({ dev: v0, address: '169.254.1.1' }),
};

describeGolden('golden bytes: same request as iproute2', fixture, cases);
