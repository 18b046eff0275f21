/**
 * IPv4 and IPv6 address and CIDR parsing and canonical formatting: the one implementation every vpc-cni-kit
 * package uses. Dependency-free and without `node:net`, because it sits on the CNI plugin's start path.
 * Parsers return `undefined` for anything malformed, so each caller fails closed with its own typed error.
 *
 * @packageDocumentation
 */
export { formatIp, ipFamily, ipFromBytes, ipToBytes, parseIp } from './address.js';
export { type Cidr, cidrContains, cidrNetwork, formatCidr, isNetwork, parseCidr } from './cidr.js';
export { familyBits, type IpAddress, type IpFamily } from './family.js';
export { formatIpv4, parseIpv4 } from './ipv4.js';
export { formatIpv6, parseIpv6 } from './ipv6.js';
