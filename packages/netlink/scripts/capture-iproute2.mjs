#!/usr/bin/env node
// Captures the rtnetlink request bytes iproute2 sends for a set of commands, for the golden-byte tests.
// Runs every command under `strace -e write=all` inside a scratch network namespace it creates and deletes.
// Needs root, iproute2 and strace. Usage: node packages/netlink/scripts/capture-iproute2.mjs > fixture.json
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { commandLine } from '../../../scripts/lib/cli.mjs';

commandLine(import.meta.url, {
  summary:
    'Prints, as JSON, the rtnetlink request bytes iproute2 sends for the golden-byte tests (root; needs strace; one scratch namespace, deleted after).',
});

const ns = `vckcap${randomBytes(3).toString('hex')}`;
const ip = (...args) => execFileSync('ip', ['-n', ns, ...args], { encoding: 'utf8' });

/** [name, expected nlmsg_type, argv after `ip -n NS`] */
const commands = [
  ['veth', 16, ['link', 'add', 'name', 'hv0', 'type', 'veth', 'peer', 'name', 'pv0']],
  [
    'veth-mtu-up',
    16,
    ['link', 'add', 'name', 'hv1', 'mtu', '9001', 'up', 'type', 'veth', 'peer', 'name', 'pv1'],
  ],
  ['bridge', 16, ['link', 'add', 'name', 'br0', 'type', 'bridge']],
  ['vlan', 16, ['link', 'add', 'link', 'v0', 'name', 'v0.5', 'type', 'vlan', 'id', '5']],
  [
    'vlan-8021ad',
    16,
    ['link', 'add', 'link', 'v0', 'name', 'v0.6', 'type', 'vlan', 'protocol', '802.1ad', 'id', '6'],
  ],
  ['link-down', 16, ['link', 'set', 'dev', 'v0', 'down']],
  ['link-up', 16, ['link', 'set', 'dev', 'v0', 'up']],
  ['link-mtu', 16, ['link', 'set', 'dev', 'v0', 'mtu', '9001']],
  ['link-mac', 16, ['link', 'set', 'dev', 'v0', 'address', '02:00:00:00:00:aa']],
  ['link-master', 16, ['link', 'set', 'dev', 'v1', 'master', 'br0']],
  ['link-del', 17, ['link', 'del', 'dev', 'hv0']],
  ['addr-add', 20, ['addr', 'add', '10.0.0.5/32', 'dev', 'v0']],
  ['addr-add6', 20, ['-6', 'addr', 'add', '2001:db8::5/64', 'dev', 'v0', 'nodad']],
  ['route-link', 24, ['route', 'add', '169.254.1.1', 'dev', 'v0', 'scope', 'link']],
  ['route-default', 24, ['route', 'add', 'default', 'via', '169.254.1.1', 'dev', 'v0']],
  ['route-table', 24, ['route', 'add', 'table', '1000', '10.1.0.0/24', 'via', '169.254.1.1', 'dev', 'v0']],
  [
    'route-table-small',
    24,
    ['route', 'replace', 'table', '100', '10.1.0.0/24', 'via', '169.254.1.1', 'dev', 'v0'],
  ],
  ['route-onlink', 24, ['route', 'add', '10.2.0.0/24', 'via', '192.0.2.1', 'dev', 'v0', 'onlink']],
  ['route-src-metric', 24, ['route', 'add', '10.3.0.0/24', 'src', '10.0.0.5', 'metric', '50', 'dev', 'v0']],
  ['route6', 24, ['-6', 'route', 'add', '2001:db8:1::/64', 'via', 'fe80::1', 'dev', 'v0']],
  ['route-del', 25, ['route', 'del', 'table', '1000', '10.1.0.0/24', 'via', '169.254.1.1', 'dev', 'v0']],
  ['addr-del', 21, ['addr', 'del', '10.0.0.5/32', 'dev', 'v0']],
  ['rule-from', 32, ['rule', 'add', 'from', '10.0.0.5/32', 'pref', '1536', 'lookup', '1000']],
  ['rule-to', 32, ['rule', 'add', 'to', '10.0.0.5/32', 'pref', '512', 'lookup', 'main']],
  ['rule-fwmark', 32, ['rule', 'add', 'pref', '1024', 'fwmark', '0x80/0x80', 'lookup', 'main']],
  ['rule-iif', 32, ['rule', 'add', 'pref', '100', 'iif', 'v0', 'lookup', '100']],
  ['rule-oif6', 32, ['-6', 'rule', 'add', 'pref', '101', 'oif', 'v0', 'lookup', '100']],
  ['rule-del', 33, ['rule', 'del', 'from', '10.0.0.5/32', 'pref', '1536', 'lookup', '1000']],
  [
    'neigh-add',
    28,
    ['neigh', 'add', '169.254.1.1', 'lladdr', '02:00:00:00:00:01', 'nud', 'permanent', 'dev', 'v0'],
  ],
  ['neigh-replace', 28, ['neigh', 'replace', '169.254.1.1', 'lladdr', '02:00:00:00:00:02', 'dev', 'v0']],
  ['neigh-add6', 28, ['-6', 'neigh', 'add', 'fe80::2', 'lladdr', '02:00:00:00:00:03', 'dev', 'v0']],
  ['neigh-del', 29, ['neigh', 'del', '169.254.1.1', 'dev', 'v0']],
];

function requestsOf(stderr) {
  const out = [];
  let cur;
  for (const line of stderr.split('\n')) {
    if (line.startsWith('sendmsg(')) {
      cur = [];
      out.push(cur);
    } else if (cur && line.startsWith(' | ')) {
      const hex = line.slice(10, 59).trim().split(/\s+/).filter(Boolean);
      cur.push(...hex);
    }
  }
  return out.map((bytes) => bytes.join(''));
}

execFileSync('ip', ['netns', 'add', ns]);
const result = {
  iproute2: execFileSync('ip', ['-V'], { encoding: 'utf8' }).trim(),
  indexes: {},
  requests: [],
};
try {
  ip('link', 'add', 'v0', 'type', 'veth', 'peer', 'name', 'v1');
  for (const l of JSON.parse(ip('-j', 'link', 'show'))) result.indexes[l.ifname] = l.ifindex;
  for (const [name, type, argv] of commands) {
    const r = spawnSync('strace', ['-e', 'trace=sendmsg', '-e', 'write=all', 'ip', '-n', ns, ...argv], {
      encoding: 'utf8',
    });
    const reqs = requestsOf(r.stderr).filter(
      (h) => Number.parseInt(h.slice(10, 12) + h.slice(8, 10), 16) === type,
    );
    if (reqs.length === 0) throw new Error(`no request of type ${type} captured for ${name}`);
    result.requests.push({ name, argv: ['ip', ...argv], exit: r.status, hex: reqs.at(-1) });
    if (name === 'bridge')
      for (const l of JSON.parse(ip('-j', 'link', 'show'))) result.indexes[l.ifname] = l.ifindex;
  }
} finally {
  execFileSync('ip', ['netns', 'del', ns]);
}
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
