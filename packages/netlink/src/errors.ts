/**
 * Errno names the kernel (or libc) reports that callers commonly branch on. Any other errno is reported
 * with code `EOTHER` and its number in {@link NetlinkError.errno}.
 */
export const ERRNO_CODES = {
  EPERM: 1,
  ENOENT: 2,
  ESRCH: 3,
  EINTR: 4,
  EIO: 5,
  EBADF: 9,
  EAGAIN: 11,
  ENOMEM: 12,
  EACCES: 13,
  EBUSY: 16,
  EEXIST: 17,
  ENODEV: 19,
  ENOTDIR: 20,
  EINVAL: 22,
  EMFILE: 24,
  ENOSPC: 28,
  ERANGE: 34,
  ENOTEMPTY: 39,
  EMSGSIZE: 90,
  ENOPROTOOPT: 92,
  EPROTONOSUPPORT: 93,
  EOPNOTSUPP: 95,
  EAFNOSUPPORT: 97,
  EADDRINUSE: 98,
  EADDRNOTAVAIL: 99,
  ENETDOWN: 100,
  ENETUNREACH: 101,
  ENOBUFS: 105,
  ENOTCONN: 107,
  ETIMEDOUT: 110,
  EHOSTUNREACH: 113,
} as const;

/** An errno name from {@link ERRNO_CODES}. */
export type ErrnoCode = keyof typeof ERRNO_CODES;

/**
 * Every code a {@link NetlinkError} can carry (a closed set):
 * - an errno name ({@link ErrnoCode}) from the kernel or a libc call, or `EOTHER` for any other errno;
 * - `NOT_SUPPORTED`: the platform has no rtnetlink (not Linux) or the FFI library could not be loaded;
 * - `INVALID_ARGUMENT`: the caller's options were rejected before anything was sent (nothing changed);
 * - `DECODE_ERROR`: bytes from the kernel (or given to a decoder) are malformed;
 * - `PROTOCOL_ERROR`: a reply did not match the request (sequence or port id), or an overrun was reported;
 * - `TIMEOUT`: the kernel did not answer before the deadline;
 * - `CLOSED`: the handle was closed.
 */
export type NetlinkErrorCode =
  | ErrnoCode
  | 'EOTHER'
  | 'NOT_SUPPORTED'
  | 'INVALID_ARGUMENT'
  | 'DECODE_ERROR'
  | 'PROTOCOL_ERROR'
  | 'TIMEOUT'
  | 'CLOSED';

const BRAND = Symbol.for('@vpc-cni-kit/netlink.NetlinkError');
const BY_NUMBER = new Map<number, ErrnoCode>(
  Object.entries(ERRNO_CODES).map(([name, n]) => [n, name as ErrnoCode]),
);

/** The errno name for a number, or `EOTHER` when it is not one of {@link ERRNO_CODES}. */
export function errnoCode(errno: number): ErrnoCode | 'EOTHER' {
  return BY_NUMBER.get(Math.abs(errno)) ?? 'EOTHER';
}

/** Fields of a {@link NetlinkError}. */
export interface NetlinkErrorInit {
  /** The stable code to branch on. */
  code: NetlinkErrorCode;
  /** What was being done, e.g. `link.add`, `route.replace`, `socket`, `setns`, `decode`. */
  op: string;
  /** The positive errno, when the error came from the kernel or libc. */
  errno?: number | undefined;
  /** The kernel's extended-ACK message (NLMSGERR_ATTR_MSG), when it sent one. */
  extack?: string | undefined;
  /** Human-readable detail. Never match on it. */
  detail?: string | undefined;
}

/**
 * The one error type this package throws. Branch on {@link NetlinkError.code} (a closed set, see
 * {@link NetlinkErrorCode}) with {@link isNetlinkError}; never on the message.
 */
export class NetlinkError extends Error {
  /** The stable code. */
  readonly code: NetlinkErrorCode;
  /** The operation that failed. */
  readonly op: string;
  /** The positive errno, when there is one. */
  readonly errno: number | undefined;
  /** The kernel's extended-ACK text, when it sent one. */
  readonly extack: string | undefined;
  /** Marks instances across duplicated module copies (ESM and CJS builds). */
  readonly [BRAND] = true;

  constructor(init: NetlinkErrorInit) {
    const parts = [`${init.op}: ${init.code}${init.code === 'EOTHER' ? ` (errno ${init.errno})` : ''}`];
    if (init.detail) parts.push(init.detail);
    if (init.extack) parts.push(`(kernel: ${init.extack})`);
    super(parts.join(' '));
    this.name = 'NetlinkError';
    this.code = init.code;
    this.op = init.op;
    this.errno = init.errno;
    this.extack = init.extack;
  }
}

/**
 * True when `value` is a {@link NetlinkError} (from any copy of this package), optionally with one of the
 * given codes.
 */
export function isNetlinkError(value: unknown, ...codes: NetlinkErrorCode[]): value is NetlinkError {
  if (typeof value !== 'object' || value === null) return false;
  if ((value as Record<symbol, unknown>)[BRAND] !== true) return false;
  const code = (value as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  return codes.length === 0 || codes.includes(code as NetlinkErrorCode);
}

/** Builds the error for a failed kernel request or libc call from its errno. */
export function errnoError(op: string, errno: number, extack?: string, detail?: string): NetlinkError {
  const n = Math.abs(errno);
  return new NetlinkError({ code: errnoCode(n), op, errno: n, extack, detail });
}

/** Builds an `INVALID_ARGUMENT` error for rejected caller input. */
export function invalidArgument(op: string, detail: string): NetlinkError {
  return new NetlinkError({ code: 'INVALID_ARGUMENT', op, detail });
}

/** Builds a `DECODE_ERROR` for malformed bytes. */
export function decodeError(detail: string): NetlinkError {
  return new NetlinkError({ code: 'DECODE_ERROR', op: 'decode', detail });
}
