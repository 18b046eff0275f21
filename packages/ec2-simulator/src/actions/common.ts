import { Ec2SimError } from '../errors.js';
import type { Filter, QueryParams } from '../query.js';
import type { Ec2State } from '../state.js';
import type { XmlObject } from '../xml.js';

/** What an action handler gets besides its parameters. */
export interface ActionContext {
  /** The account state. */
  readonly state: Ec2State;
  /** Region name, e.g. `us-west-2`. */
  readonly region: string;
}

/** An EC2 action: reads and validates its parameters (calling `params.finish()`), then acts. */
export type ActionHandler = (ctx: ActionContext, params: QueryParams) => XmlObject;

/** Throttling bucket families (see the token-bucket table in the README). */
export type ActionFamily =
  | 'describe'
  | 'mutating'
  | 'eni-lifecycle'
  | 'ipv4-assign'
  | 'ipv6-assign'
  | 'modify-eni'
  | 'tags';

/** An action's handler and the bucket it draws from. */
export interface ActionSpec {
  /** The handler. */
  readonly handler: ActionHandler;
  /** Rate-limit family. */
  readonly family: ActionFamily;
  /** A Describe* call may be unfiltered and unpaginated (drawing from the smaller bucket). */
  readonly unboundedDescribe?: boolean;
}

/** Renders a tag map as an EC2 `tagSet`. */
export function tagSet(tags: Map<string, string>): XmlObject[] {
  return [...tags].map(([key, value]) => ({ key, value }));
}

/** Converts an EC2 filter value with `*` and `?` wildcards to a matcher. */
function matcher(value: string): (s: string) => boolean {
  if (!/[*?]/.test(value)) return (s) => s === value;
  const re = new RegExp(
    `^${value
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
      .join('')}$`,
    's',
  );
  return (s) => re.test(s);
}

/**
 * Filters `items`. `fields(item, name)` gives the item's values for a filter name (`tag:K` and `tag-key` are
 * handled through `tags`). A filter matches when any value matches; all filters must match. An unknown filter
 * name is `InvalidParameterValue`, as in EC2.
 */
export function applyFilters<T>(
  items: readonly T[],
  filters: readonly Filter[],
  known: readonly string[],
  fields: (item: T, name: string) => readonly string[],
  tags?: (item: T) => Map<string, string>,
): T[] {
  for (const f of filters) {
    const isTag =
      tags !== undefined && (f.name.startsWith('tag:') || f.name === 'tag-key' || f.name === 'tag-value');
    if (!isTag && !known.includes(f.name)) {
      throw new Ec2SimError('InvalidParameterValue', `The filter '${f.name}' is invalid`);
    }
    if (f.values.length === 0) {
      throw new Ec2SimError('InvalidParameterValue', `The filter '${f.name}' requires at least one value`);
    }
  }
  const compiled = filters.map((f) => ({ name: f.name, match: f.values.map(matcher) }));
  return items.filter((item) =>
    compiled.every(({ name, match }) => {
      let have: readonly string[];
      if (tags && name.startsWith('tag:')) {
        const v = tags(item).get(name.slice(4));
        have = v === undefined ? [] : [v];
      } else if (tags && name === 'tag-key') have = [...tags(item).keys()];
      else if (tags && name === 'tag-value') have = [...tags(item).values()];
      else have = fields(item, name);
      return have.some((h) => match.some((m) => m(h)));
    }),
  );
}

/** Reads MaxResults/NextToken and returns one page plus the next token. */
export function paginate<T>(
  items: readonly T[],
  params: QueryParams,
  limits: { min: number; max: number; action: string },
): { page: T[]; nextToken: string | undefined; paged: boolean } {
  const max = params.int('MaxResults', limits.min, limits.max);
  const token = params.string('NextToken');
  let offset = 0;
  if (token !== undefined) {
    const m = /^(\d{1,9})\.([A-Za-z]+)$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
    if (!m || m[2] !== limits.action) {
      throw new Ec2SimError('InvalidParameterValue', `Invalid value '${token}' for NextToken`);
    }
    offset = Number(m[1]);
  }
  if (max === undefined && token === undefined)
    return { page: [...items], nextToken: undefined, paged: false };
  const size = max ?? limits.max;
  const page = items.slice(offset, offset + size);
  const next =
    offset + size < items.length
      ? Buffer.from(`${offset + size}.${limits.action}`).toString('base64url')
      : undefined;
  return { page, nextToken: next, paged: true };
}

/** Rejects a request that combines resource ids with MaxResults (EC2's rule for Describe* by id). */
export function rejectIdsWithMaxResults(params: QueryParams, ids: readonly string[], idName: string): void {
  if (ids.length > 0 && params.has('MaxResults')) {
    throw new Ec2SimError(
      'InvalidParameterCombination',
      `The parameter ${idName} cannot be used with the parameter MaxResults`,
    );
  }
}

/**
 * Keeps the items whose `key` is among `wanted` (all items when `wanted` is empty). When some wanted value
 * matches no item, throws `notFound(missing)`, the missing values in request order.
 */
export function selectByKey<T>(
  items: readonly T[],
  wanted: readonly string[],
  key: (item: T) => string,
  notFound: (missing: string[]) => Ec2SimError,
): T[] {
  if (wanted.length === 0) return [...items];
  const missing = wanted.filter((w) => !items.some((i) => key(i) === w));
  if (missing.length > 0) throw notFound(missing);
  return items.filter((i) => wanted.includes(key(i)));
}

/** Reads `DryRun`; when true, the action answers `DryRunOperation` after validation. */
export function dryRun(params: QueryParams): boolean {
  return params.bool('DryRun') ?? false;
}

/** Throws the `DryRunOperation` answer. */
export function dryRunSucceeded(): never {
  throw new Ec2SimError('DryRunOperation', 'Request would have succeeded, but DryRun flag is set.');
}

/** ISO-8601 time with milliseconds, as EC2 prints it. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
