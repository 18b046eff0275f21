import { isAbsolute } from 'node:path';
import { isIPv4, isIPv6 } from '@vpc-cni-kit/cni-spec';

/** Where an HTTP endpoint listens: a TCP host and port, or a unix socket. */
export type BindAddress =
  | { readonly kind: 'tcp'; readonly host: string | undefined; readonly port: number }
  | { readonly kind: 'unix'; readonly path: string };

/**
 * The longest path a unix socket can have: the kernel's `sun_path` holds 108 bytes with the terminating NUL. Node
 * (libuv) does not refuse a longer one: it cuts it short, so a server would listen on another file than the one
 * named, and a client would never reach it.
 */
export const MAX_UNIX_SOCKET_PATH_BYTES = 107;

/** Why `path` cannot name a unix socket (not absolute, or longer than {@link MAX_UNIX_SOCKET_PATH_BYTES}), or `undefined`. */
export function unixSocketPathProblem(path: string): string | undefined {
  if (!isAbsolute(path)) return 'must be an absolute path';
  const bytes = Buffer.byteLength(path);
  if (bytes > MAX_UNIX_SOCKET_PATH_BYTES)
    return `is ${bytes} bytes long; a unix socket's path has at most ${MAX_UNIX_SOCKET_PATH_BYTES}`;
  return undefined;
}

/**
 * Parses `host:port`, `:port`, `[ipv6]:port` or `unix:<absolute path>` (the forms `INTROSPECTION_BIND_ADDRESS`
 * and `AWS_NODE_METRICS_BIND_ADDRESS` take). The host must be a real IPv4 or IPv6 address or `localhost`, the
 * port 0–65535 (0: any free port). Returns the address, or why the text is not one.
 */
export function parseBindAddress(text: string): BindAddress | { readonly problem: string } {
  if (text.startsWith('unix:')) {
    const path = text.slice(5);
    if (!isAbsolute(path)) return { problem: 'unix: needs an absolute path' };
    const problem = unixSocketPathProblem(path);
    return problem === undefined ? { kind: 'unix', path } : { problem: `unix: path ${problem}` };
  }
  const colon = text.lastIndexOf(':');
  if (colon < 0) return { problem: 'must be host:port, :port, [ipv6]:port or unix:<path>' };
  const rawHost = text.slice(0, colon);
  const portText = text.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535)
    return { problem: `port must be 0–65535, got ${JSON.stringify(portText)}` };
  let host: string | undefined;
  if (rawHost === '') host = undefined;
  else if (rawHost.startsWith('[') && rawHost.endsWith(']')) {
    host = rawHost.slice(1, -1);
    if (!isIPv6(host)) return { problem: `${JSON.stringify(rawHost)} is not an IPv6 address` };
  } else if (rawHost === 'localhost' || isIPv4(rawHost)) host = rawHost;
  else return { problem: `${JSON.stringify(rawHost)} is not an IPv4 address, [IPv6] address or localhost` };
  return { kind: 'tcp', host, port: Number(portText) };
}
