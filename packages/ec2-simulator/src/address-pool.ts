import type { RandomSource } from './clock.js';
import { Ec2SimError } from './errors.js';
import { formatIpv4, type Ipv4Cidr, type Ipv6Cidr, ipv4Size } from './ip.js';

/** How a subnet picks free IPv4 addresses: lowest first, or uniformly at random (as AWS appears to). */
export type AddressAllocation = 'sequential' | 'random';

/**
 * The IPv4 addresses of one subnet. AWS reserves the first four and the last address; /28 prefixes need an
 * aligned block of 16 free addresses, so scattered single addresses fragment the subnet for prefixes.
 */
export class Ipv4Pool {
  /** The subnet CIDR. */
  readonly cidr: Ipv4Cidr;
  readonly #used: Uint8Array;
  #free: number;
  /** No free address below this index (for sequential allocation). */
  #hint = 4;

  /** @param cidr - the subnet's CIDR (/16 to /28) */
  constructor(cidr: Ipv4Cidr) {
    this.cidr = cidr;
    const size = ipv4Size(cidr);
    this.#used = new Uint8Array(size);
    for (const i of [0, 1, 2, 3, size - 1]) this.#used[i] = 1;
    this.#free = size - 5;
  }

  /** Addresses still free (AWS's `AvailableIpAddressCount`). */
  get available(): number {
    return this.#free;
  }

  /** True when `addr` is inside the subnet. */
  contains(addr: number): boolean {
    return addr >= this.cidr.base && addr < this.cidr.base + this.#used.length;
  }

  /** True when `addr` is one of the five addresses AWS reserves. */
  isReserved(addr: number): boolean {
    const i = addr - this.cidr.base;
    return i <= 3 || i === this.#used.length - 1;
  }

  /** True when `addr` is taken (or reserved). */
  isUsed(addr: number): boolean {
    return this.#used[addr - this.cidr.base] === 1;
  }

  /** Marks a specific free address as used. The caller has checked it is inside, free and not reserved. */
  take(addr: number): void {
    this.#used[addr - this.cidr.base] = 1;
    this.#free--;
  }

  /** Picks and takes `count` free addresses, or throws `InsufficientFreeAddressesInSubnet` taking none. */
  allocate(count: number, how: AddressAllocation, random: RandomSource, subnetId: string): number[] {
    if (count > this.#free) {
      throw new Ec2SimError(
        'InsufficientFreeAddressesInSubnet',
        `There are not enough free addresses in subnet '${subnetId}' to satisfy the requested number of addresses.`,
      );
    }
    const picked: number[] = [];
    const size = this.#used.length;
    if (how === 'sequential') {
      for (let i = this.#hint; i < size && picked.length < count; i++)
        if (this.#used[i] === 0) picked.push(i);
    } else {
      // Random probes first; a linear sweep from a random start finds the rest in a nearly full subnet.
      for (let tries = 0; tries < count * 8 && picked.length < count; tries++) {
        const i = Math.floor(random() * size);
        if (this.#used[i] === 0 && !picked.includes(i)) picked.push(i);
      }
      const start = Math.floor(random() * size);
      for (let k = 0; k < size && picked.length < count; k++) {
        const i = (start + k) % size;
        if (this.#used[i] === 0 && !picked.includes(i)) picked.push(i);
      }
    }
    picked.sort((a, b) => a - b);
    for (const i of picked) this.#used[i] = 1;
    this.#free -= count;
    if (how === 'sequential') this.#hint = (picked.at(-1) ?? this.#hint) + 1;
    return picked.map((i) => this.cidr.base + i);
  }

  /** True when the aligned /28 at `base` is inside the subnet and completely free. */
  prefixFree(base: number): boolean {
    const off = base - this.cidr.base;
    if (off < 0 || off + 16 > this.#used.length || off % 16 !== 0) return false;
    for (let i = off; i < off + 16; i++) if (this.#used[i] === 1) return false;
    return true;
  }

  /** Takes an aligned free /28 (checked by {@link Ipv4Pool.prefixFree}). */
  takePrefix(base: number): void {
    const off = base - this.cidr.base;
    this.#used.fill(1, off, off + 16);
    this.#free -= 16;
  }

  /** Picks and takes `count` aligned free /28 blocks, or throws `InsufficientCidrBlocks` taking none. */
  allocatePrefixes(count: number): number[] {
    const found: number[] = [];
    for (let off = 0; off + 16 <= this.#used.length && found.length < count; off += 16) {
      if (this.prefixFree(this.cidr.base + off)) found.push(this.cidr.base + off);
    }
    if (found.length < count) {
      throw new Ec2SimError(
        'InsufficientCidrBlocks',
        "There aren't sufficient free Cidr Blocks in the subnet to satisfy the request.",
      );
    }
    for (const b of found) this.takePrefix(b);
    return found;
  }

  /** Returns an address to the pool. */
  release(addr: number): void {
    const i = addr - this.cidr.base;
    if (this.#used[i] === 1 && !this.isReserved(addr)) {
      this.#used[i] = 0;
      this.#free++;
      if (i < this.#hint) this.#hint = i;
    }
  }

  /** Returns a /28 to the pool. */
  releasePrefix(base: number): void {
    for (let a = base; a < base + 16; a++) this.release(a);
  }

  /** Dotted form of the subnet's addresses in use (reserved excluded), for state dumps. */
  usedAddresses(): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.#used.length; i++) {
      const a = this.cidr.base + i;
      if (this.#used[i] === 1 && !this.isReserved(a)) out.push(formatIpv4(a));
    }
    return out;
  }
}

/**
 * The IPv6 space of a subnet (/64). Single addresses come from the first /80; /80 prefixes are handed out from
 * the second /80 upwards.
 */
export class Ipv6Pool {
  /** The subnet's IPv6 CIDR. */
  readonly cidr: Ipv6Cidr;
  readonly #addresses = new Set<bigint>();
  readonly #prefixes = new Set<bigint>();
  #nextAddress = 0x10n;
  #nextPrefix = 1n;

  /** @param cidr - the subnet's IPv6 CIDR (a /64) */
  constructor(cidr: Ipv6Cidr) {
    this.cidr = cidr;
  }

  /** True when the address lies in the subnet's /64. */
  contains(addr: bigint): boolean {
    return addr >= this.cidr.base && addr < this.cidr.base + (1n << BigInt(128 - this.cidr.length));
  }

  /** True when the address is assigned or falls in an assigned /80. */
  isUsed(addr: bigint): boolean {
    if (this.#addresses.has(addr)) return true;
    return this.#prefixes.has(addr & ~((1n << 48n) - 1n));
  }

  /** Takes a specific address. */
  take(addr: bigint): void {
    this.#addresses.add(addr);
  }

  /** Allocates `count` addresses. */
  allocate(count: number): bigint[] {
    const out: bigint[] = [];
    while (out.length < count) {
      const a = this.cidr.base + this.#nextAddress++;
      if (!this.isUsed(a)) out.push(a);
    }
    for (const a of out) this.#addresses.add(a);
    return out;
  }

  /** True when the /80 at `base` is aligned, inside and free. */
  prefixFree(base: bigint): boolean {
    if (base % (1n << 48n) !== 0n || !this.contains(base) || this.#prefixes.has(base)) return false;
    for (const a of this.#addresses) if ((a & ~((1n << 48n) - 1n)) === base) return false;
    return true;
  }

  /** Takes a specific /80. */
  takePrefix(base: bigint): void {
    this.#prefixes.add(base);
  }

  /** Allocates `count` /80 prefixes, or throws `InsufficientCidrBlocks`. */
  allocatePrefixes(count: number): bigint[] {
    const out: bigint[] = [];
    while (out.length < count) {
      if (this.#nextPrefix >= 1n << 16n) {
        for (const b of out) this.#prefixes.delete(b);
        throw new Ec2SimError(
          'InsufficientCidrBlocks',
          "There aren't sufficient free Cidr Blocks in the subnet to satisfy the request.",
        );
      }
      const b = this.cidr.base + (this.#nextPrefix++ << 48n);
      if (this.prefixFree(b)) {
        this.#prefixes.add(b);
        out.push(b);
      }
    }
    return out;
  }

  /** Returns an address. */
  release(addr: bigint): void {
    this.#addresses.delete(addr);
  }

  /** Returns a /80. */
  releasePrefix(base: bigint): void {
    this.#prefixes.delete(base);
  }
}
