import type { Op } from '../src/ops/driver.js';
import * as link from '../src/ops/link.js';
import fixture from './fixtures/iproute2-branch-links.json' with { type: 'json' };
import { describeGolden } from './helpers.js';

// The branch links of security groups for pods, as iproute2 itself encodes them (captured by
// fixtures/capture-branch-links.mjs): `vlan.eth.<id>` on the trunk with the branch MAC, as an 802.1Q link
// (RTM_NEWLINK with IFLA_ADDRESS, IFLA_LINK, IFLA_IFNAME and IFLA_LINKINFO{kind "vlan", IFLA_VLAN_ID}), which this
// kernel refuses but iproute2 still sends, and as the virtual VPC's macvlan.
const trunk0 = fixture.indexes.trunk0;

const cases: Record<string, () => Op<unknown>> = {
  'vlan-branch': () =>
    link.linkAdd({ kind: 'vlan', name: 'vlan.eth.5', parent: trunk0, id: 5, address: '0a:b0:00:00:00:05' }),
  'vlan-branch-4094': () =>
    link.linkAdd({
      kind: 'vlan',
      name: 'vlan.eth.4094',
      parent: trunk0,
      id: 4094,
      address: '0a:b0:00:00:0f:fe',
    }),
  'macvlan-branch': () =>
    link.linkAdd({
      kind: 'macvlan',
      name: 'vlan.eth.6',
      parent: trunk0,
      mode: 'vepa',
      address: '0a:b0:00:00:00:06',
    }),
  'macvlan-branch-bridge': () =>
    link.linkAdd({
      kind: 'macvlan',
      name: 'vlan.eth.7',
      parent: trunk0,
      mode: 'bridge',
      address: '0a:b0:00:00:00:07',
    }),
};

describeGolden('golden bytes: branch links as iproute2 sends them', fixture, cases);
