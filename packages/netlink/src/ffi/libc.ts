import { createRequire } from 'node:module';
import { NetlinkError } from '../errors.js';

/** A libc function bound through koffi: callable synchronously, or on koffi's worker with `.async`. @internal */
export interface Native<A extends unknown[], R> {
  (...args: A): R;
  async(...args: [...A, (err: unknown, result: R) => void]): void;
}

/** The few libc calls this package makes. @internal */
export interface Libc {
  socket: Native<[number, number, number], number>;
  bind: Native<[number, Buffer, number], number>;
  getsockname: Native<[number, Buffer, Buffer], number>;
  setsockopt: Native<[number, number, number, Buffer, number], number>;
  send: Native<[number, Buffer, number, number], number>;
  recv: Native<[number, Buffer | null, number, number], number>;
  close: Native<[number], number>;
  setns: Native<[number, number], number>;
  unshare: Native<[number], number>;
  mount: Native<[string | null, string, string | null, number, null], number>;
  umount2: Native<[string, number], number>;
  /** The calling thread's errno after the last call. */
  errno(): number;
}

let cached: Libc | undefined;

/**
 * Loads koffi and binds libc on first use, so importing this package never loads a native module.
 * Throws `NOT_SUPPORTED` off Linux or when koffi cannot be loaded.
 * @internal
 */
export function libc(platform: string = process.platform): Libc {
  if (platform !== 'linux') {
    throw new NetlinkError({
      code: 'NOT_SUPPORTED',
      op: 'load',
      detail: `rtnetlink needs Linux, not ${platform}`,
    });
  }
  if (cached) return cached;
  let koffi: {
    load(name: string): { func(decl: string): unknown };
    errno(): number;
  };
  try {
    // CJS build: __filename exists. ESM build: import.meta.url (esbuild's `require` shim there throws).
    const from = typeof __filename === 'string' ? __filename : import.meta.url;
    koffi = createRequire(from)('koffi');
  } catch (e) {
    throw new NetlinkError({
      code: 'NOT_SUPPORTED',
      op: 'load',
      detail: `koffi could not be loaded: ${(e as Error).message}`,
    });
  }
  const lib = koffi.load('libc.so.6');
  const f = <A extends unknown[], R>(decl: string) => lib.func(decl) as Native<A, R>;
  cached = {
    socket: f('int socket(int, int, int)'),
    bind: f('int bind(int, void *, uint32_t)'),
    getsockname: f('int getsockname(int, void *, void *)'),
    setsockopt: f('int setsockopt(int, int, int, void *, uint32_t)'),
    send: f('long send(int, void *, size_t, int)'),
    recv: f('long recv(int, void *, size_t, int)'),
    close: f('int close(int)'),
    setns: f('int setns(int, int)'),
    unshare: f('int unshare(int)'),
    mount: f('int mount(const char *, const char *, const char *, unsigned long, void *)'),
    umount2: f('int umount2(const char *, int)'),
    errno: () => koffi.errno(),
  };
  return cached;
}

// Socket-level constants (x86_64 and arm64 share these values).
/** @internal */ export const AF_NETLINK = 16;
/** @internal */ export const SOCK_RAW = 3;
/** @internal */ export const SOCK_CLOEXEC = 0o2000000;
/** @internal */ export const NETLINK_ROUTE = 0;
/** @internal */ export const SOL_SOCKET = 1;
/** @internal */ export const SO_SNDBUF = 7;
/** @internal */ export const SO_RCVBUF = 8;
/** @internal */ export const SO_RCVTIMEO = 20;
/** @internal */ export const SOL_NETLINK = 270;
/** @internal */ export const NETLINK_EXT_ACK = 11;
/** @internal */ export const NETLINK_GET_STRICT_CHK = 12;
/** @internal */ export const MSG_PEEK = 0x2;
/** @internal */ export const MSG_TRUNC = 0x20;
/** @internal */ export const MSG_DONTWAIT = 0x40;
/** @internal */ export const CLONE_NEWNET = 0x40000000;
/** @internal */ export const MS_BIND = 4096;
/** @internal */ export const MS_REC = 16384;
/** @internal */ export const MS_SHARED = 1 << 20;
/** @internal */ export const MNT_DETACH = 2;
/** @internal */ export const EINTR = 4;
/** @internal */ export const EAGAIN = 11;
/** @internal */ export const EINVAL = 22;
