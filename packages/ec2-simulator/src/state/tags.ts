import { Ec2SimError } from '../errors.js';
import { MAX_TAGS, type StateStore } from './store.js';

function taggable(store: StateStore, id: string): Map<string, string> {
  if (id.startsWith('eni-')) return store.requireEni(id).tags;
  if (id.startsWith('i-')) return store.requireInstance(id).tags;
  if (id.startsWith('subnet-')) return store.requireSubnet(id).tags;
  if (id.startsWith('sg-')) return store.requireGroup(id).tags;
  throw new Ec2SimError('InvalidID', `The ID '${id}' is not valid`);
}

/** CreateTags on ENIs, instances, subnets or security groups (all ids checked first). */
export function createTags(
  store: StateStore,
  resourceIds: readonly string[],
  tags: readonly (readonly [string, string])[],
): void {
  const targets = resourceIds.map((id) => taggable(store, id));
  store.checkTags(tags);
  for (const t of targets) {
    if (t.size + tags.filter(([k]) => !t.has(k)).length > MAX_TAGS) {
      throw new Ec2SimError('TagLimitExceeded', `A resource can have at most ${MAX_TAGS} tags.`);
    }
  }
  for (const [i, t] of targets.entries()) {
    for (const [k, v] of tags) t.set(k, v);
    store.emit({ type: 'tags-changed', resourceId: resourceIds[i]! });
  }
}

/** DeleteTags: a tag with a value is deleted only when the value matches; no tags deletes all. */
export function deleteTags(
  store: StateStore,
  resourceIds: readonly string[],
  tags: readonly (readonly [string, string | undefined])[],
): void {
  const targets = resourceIds.map((id) => taggable(store, id));
  for (const [i, t] of targets.entries()) {
    if (tags.length === 0) t.clear();
    for (const [k, v] of tags) if (v === undefined || t.get(k) === v) t.delete(k);
    store.emit({ type: 'tags-changed', resourceId: resourceIds[i]! });
  }
}
