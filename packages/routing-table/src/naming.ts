import { createHash } from 'node:crypto';
import { invalidArgument, RoutingError } from './errors.js';

const IFNAME = /^[A-Za-z0-9_.:-]+$/;

/** Validates a host veth prefix: 1–4 characters, not `eth`, `vlan` or `lo`. Throws `INVALID_ARGUMENT`. */
export function validateVethPrefix(prefix: string): string {
  if (typeof prefix !== 'string' || prefix.length < 1 || prefix.length > 4 || !IFNAME.test(prefix)) {
    throw invalidArgument('vethPrefix', `must be 1–4 interface-name characters: ${JSON.stringify(prefix)}`);
  }
  if (prefix === 'eth' || prefix === 'vlan' || prefix === 'lo') {
    throw invalidArgument('vethPrefix', `reserved prefix: ${JSON.stringify(prefix)}`);
  }
  return prefix;
}

/** Validates an interface name (1–15 characters of `[A-Za-z0-9_.:-]`). Throws `INVALID_ARGUMENT`. */
export function validateIfName(name: string, op: string): string {
  if (
    typeof name !== 'string' ||
    name.length < 1 ||
    name.length > 15 ||
    !IFNAME.test(name) ||
    name === '.' ||
    name === '..'
  ) {
    throw invalidArgument(op, `not a valid interface name: ${JSON.stringify(name)}`);
  }
  return name;
}

/**
 * The reference's host veth name: `prefix` + the first 11 hex characters of SHA-1 of
 * `"<namespace>.<podName>"`; for an extra interface (index i > 0) the pod name used is `"<podName>.<i>"`.
 * E.g. `hostVethName('eni', 'default', 'web-0')`. Throws `INVALID_ARGUMENT` on a bad prefix or index.
 */
export function hostVethName(prefix: string, namespace: string, podName: string, index = 0): string {
  validateVethPrefix(prefix);
  return vethName(prefix, namespace, podName, index);
}

/**
 * The host veth name of a branch-ENI (security groups for pods) pod: prefix `vlan` in strict mode (the one
 * place the reference uses that otherwise reserved prefix), the configured `vethPrefix` in standard mode.
 */
export function branchHostVethName(
  mode: 'strict' | 'standard',
  vethPrefix: string,
  namespace: string,
  podName: string,
): string {
  if (mode === 'strict') return vethName('vlan', namespace, podName, 0);
  return hostVethName(vethPrefix, namespace, podName);
}

function vethName(prefix: string, namespace: string, podName: string, index: number): string {
  if (!Number.isInteger(index) || index < 0)
    throw invalidArgument('hostVethName', 'index must be an integer ≥ 0');
  const name = index > 0 ? `${podName}.${index}` : podName;
  const digest = createHash('sha1').update(`${namespace}.${name}`).digest('hex');
  return `${prefix}${digest.slice(0, 11)}`;
}

/** A source of random bytes (inject `crypto.randomBytes` in production, a seeded source in tests). */
export type RandomBytes = (size: number) => Uint8Array;

/**
 * Generates a host veth MAC as the reference does: 6 random bytes made locally administered unicast
 * (first byte `| 0x02`, `& ~0x01`), retried (up to `attempts`, default 10) until it differs from every MAC in
 * `taken`. Throws `MAC_EXHAUSTED` when every attempt collides.
 */
export function generateHostMac(random: RandomBytes, taken: Iterable<string>, attempts = 10): string {
  const used = new Set([...taken].map((m) => m.toLowerCase()));
  for (let i = 0; i < attempts; i++) {
    const bytes = random(6);
    if (bytes.length < 6)
      throw invalidArgument('generateHostMac', 'random source returned fewer than 6 bytes');
    const b = Array.from(bytes.slice(0, 6));
    b[0] = (b[0]! | 0x02) & ~0x01;
    const mac = b.map((x) => x.toString(16).padStart(2, '0')).join(':');
    if (!used.has(mac)) return mac;
  }
  throw new RoutingError({
    code: 'MAC_EXHAUSTED',
    op: 'generateHostMac',
    detail: `${attempts} attempts collided`,
  });
}

/**
 * Route table id of an ENI: network card 0 / device 0 → 254 (main); card 0 / device d → d + 1; card n > 0 →
 * 10000 + d + 100·n. Throws `INVALID_ARGUMENT` for negative or non-integer input.
 */
export function routeTableId(deviceNumber: number, networkCard = 0): number {
  if (!Number.isInteger(deviceNumber) || deviceNumber < 0 || deviceNumber > 99) {
    throw invalidArgument('routeTableId', `device number must be an integer 0–99: ${deviceNumber}`);
  }
  if (!Number.isInteger(networkCard) || networkCard < 0 || networkCard > 99) {
    throw invalidArgument('routeTableId', `network card must be an integer 0–99: ${networkCard}`);
  }
  if (networkCard === 0) return deviceNumber === 0 ? 254 : deviceNumber + 1;
  return 10000 + deviceNumber + 100 * networkCard;
}
