/** An address family: 4 (IPv4, AF_INET) or 6 (IPv6, AF_INET6). */
export type IpFamily = 4 | 6;

/** An address as a value: its family and the address as an unsigned integer (32 or 128 bits). */
export interface IpAddress {
  /** 4 or 6. */
  readonly family: IpFamily;
  /** The address as an unsigned integer, most significant bit first (network order). */
  readonly value: bigint;
}

/** The width of a family's addresses in bits: 32 or 128. */
export function familyBits(family: IpFamily): 32 | 128 {
  return family === 4 ? 32 : 128;
}
