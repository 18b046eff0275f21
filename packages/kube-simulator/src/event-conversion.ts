import type { KubeObject, VersionConverter } from './resource-type.js';

/** events.k8s.io/v1 field ⇄ core v1 field, for the fields whose names differ. */
const RENAMES: readonly (readonly [string, string])[] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

function rename(
  obj: KubeObject,
  pairs: readonly (readonly [string, string])[],
  apiVersion: string,
): KubeObject {
  const out: KubeObject = { ...obj, apiVersion };
  for (const [from, to] of pairs) {
    delete out[from];
    if (obj[from] !== undefined) out[to] = obj[from];
  }
  return out;
}

/**
 * Both Event APIs share one storage (core v1 form), as in the real API server: an Event created through
 * `events.k8s.io/v1` is visible through `/api/v1` and the other way round.
 */
export const eventsV1Converter: VersionConverter = {
  toStorage: (obj) => rename(obj, RENAMES, 'v1'),
  fromStorage: (obj) =>
    rename(
      obj,
      RENAMES.map(([a, b]) => [b, a] as const),
      'events.k8s.io/v1',
    ),
};
