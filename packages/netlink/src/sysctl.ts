import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { invalidArgument } from './errors.js';
import { fsError, withNetnsSync } from './netns-switch.js';

/** Options for {@link sysctlRead} and {@link sysctlWrite}. */
export interface SysctlOptions {
  /** Read or write the value inside this network namespace (a namespace file path). */
  netns?: string;
}

/**
 * Turns `net.ipv4.ip_forward` or `net/ipv4/conf/eth0.5/rp_filter` into a path under /proc/sys. Only
 * `net` keys are accepted (they are the per-namespace ones). Slash form is needed when a component
 * contains a dot (interface names).
 */
function keyPath(op: string, key: string): string {
  if (typeof key !== 'string') throw invalidArgument(op, 'key must be a string');
  const rel = key.includes('/') ? key : key.replace(/\./g, '/');
  const parts = rel.split('/');
  if (
    parts[0] !== 'net' ||
    parts.length < 2 ||
    parts.some((p) => p === '' || p === '.' || p === '..' || !/^[A-Za-z0-9_.@-]+$/.test(p))
  ) {
    throw invalidArgument(op, `bad sysctl key ${JSON.stringify(key)}`);
  }
  return `/proc/sys/${rel}`;
}

function openIn(op: string, path: string, flags: 'r' | 'w', netns: string | undefined): number {
  const doOpen = (): number => {
    try {
      return openSync(path, flags);
    } catch (e) {
      throw fsError(op, e);
    }
  };
  // /proc/sys/net resolves against the opener's namespace, so only the open() runs inside it.
  return netns === undefined ? doOpen() : withNetnsSync(netns, doOpen);
}

/** Reads a `net.*` sysctl (trailing newline removed), optionally inside a namespace. */
export function sysctlRead(key: string, options: SysctlOptions = {}): string {
  const op = 'sysctl.read';
  const fd = openIn(op, keyPath(op, key), 'r', options.netns);
  try {
    return readFileSync(fd, 'utf8').replace(/\n$/, '');
  } catch (e) {
    throw fsError(op, e);
  } finally {
    closeSync(fd);
  }
}

/** Writes a `net.*` sysctl, optionally inside a namespace. */
export function sysctlWrite(key: string, value: string | number, options: SysctlOptions = {}): void {
  const op = 'sysctl.write';
  const text = String(value);
  if (/[\n\0]/.test(text)) throw invalidArgument(op, 'value must be one line');
  const fd = openIn(op, keyPath(op, key), 'w', options.netns);
  try {
    writeSync(fd, text);
  } catch (e) {
    throw fsError(op, e);
  } finally {
    closeSync(fd);
  }
}
