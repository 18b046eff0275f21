/**
 * One reference token of an RFC 6901 JSON pointer: `~` becomes `~0`, then `/` becomes `~1` (in that order, so
 * a key holding `~1` keeps it). What a JSON patch needs to name a key such as `vpc.amazonaws.com/pod-eni` in a
 * pod's annotations or resource limits: `/metadata/annotations/${jsonPointerToken(key)}`.
 */
export function jsonPointerToken(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}
