import { randomBytes } from 'node:crypto';

/**
 * A name unique to this run, safe for network namespaces and (when `max` is 15) interface names:
 * `<prefix><pid36><random hex>`, cut to `max` characters.
 */
export function uniqueName(prefix: string, max = 15): string {
  const tail = `${process.pid.toString(36)}${randomBytes(4).toString('hex')}`;
  return `${prefix}${tail}`.slice(0, max);
}
