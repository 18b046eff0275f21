import { Ec2SimError } from '../errors.js';
import { type ActionHandler, dryRun, dryRunSucceeded } from './common.js';

/** CreateTags: `ResourceId.N`, `Tag.N.Key` / `Tag.N.Value`. */
export const createTags: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const ids = params.list('ResourceId');
  const tags = params.structs(
    'Tag',
    (p) => [params.required(`${p}Key`), params.string(`${p}Value`) ?? ''] as const,
  );
  params.finish();
  if (ids.length === 0)
    throw new Ec2SimError('MissingParameter', 'The request must contain the parameter ResourceId');
  if (tags.length === 0)
    throw new Ec2SimError('MissingParameter', 'The request must contain the parameter Tag');
  if (dry) dryRunSucceeded();
  state.createTags(ids, tags);
  return { return: true };
};

/** DeleteTags: `ResourceId.N`, optional `Tag.N.Key` / `Tag.N.Value`. */
export const deleteTags: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const ids = params.list('ResourceId');
  const tags = params.structs(
    'Tag',
    (p) => [params.required(`${p}Key`), params.string(`${p}Value`)] as const,
  );
  params.finish();
  if (ids.length === 0)
    throw new Ec2SimError('MissingParameter', 'The request must contain the parameter ResourceId');
  if (dry) dryRunSucceeded();
  state.deleteTags(ids, tags);
  return { return: true };
};
