import { MAX_VLAN_ID } from './annotation.js';
import { invalidArgument } from './errors.js';

/**
 * The lowest VLAN id in `1..limit` not in `used`, or `undefined` when all are taken (the trunk's branch limit is
 * reached). Pure. Throws `INVALID_ARGUMENT` for a limit outside `0..4094`.
 */
export function lowestFreeVlan(used: ReadonlySet<number>, limit: number): number | undefined {
  if (!Number.isInteger(limit) || limit < 0 || limit > MAX_VLAN_ID)
    throw invalidArgument('lowestFreeVlan', `bad branch limit: ${limit}`);
  for (let id = 1; id <= limit; id++) if (!used.has(id)) return id;
  return undefined;
}
