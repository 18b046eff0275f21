import { eniTagKeys } from './tags.js';

/** What {@link classifyEni} needs to know about an ENI. */
export interface ClassifiableEni {
  /** `eni-…` id. */
  readonly eniId: string;
  /** Its tags. */
  readonly tags: Readonly<Record<string, string>>;
  /** EC2 `InterfaceType` (`interface`, `trunk`, `efa`, `efa-only`, …), when known. */
  readonly interfaceType?: string;
}

/** How this node may treat an ENI. */
export type EniClass = 'managed' | 'unmanaged' | 'efa-only';

/** Inputs to {@link classifyEni} besides the ENI. */
export interface ClassifyOptions {
  /** This node's instance id. */
  readonly instanceId: string;
  /** The primary ENI's id (always managed). */
  readonly primaryEniId: string;
  /** The reference's `MANAGE_UNTAGGED_ENI` (default true): manage ENIs not tagged for this instance. */
  readonly manageUntaggedEnis?: boolean;
}

/**
 * The reference's rule (§4.5): `efa-only` interfaces are skipped; the primary ENI is managed; a `no_manage` tag
 * of `"true"` makes an ENI unmanaged (any other value: managed); an `instance_id` tag naming this instance makes
 * it managed; anything else is managed only when `manageUntaggedEnis` is on.
 */
export function classifyEni(eni: ClassifiableEni, options: ClassifyOptions): EniClass {
  if (eni.interfaceType === 'efa-only') return 'efa-only';
  if (eni.eniId === options.primaryEniId) return 'managed';
  const noManage = eni.tags[eniTagKeys.noManage];
  if (noManage !== undefined) return noManage === 'true' ? 'unmanaged' : 'managed';
  if (eni.tags[eniTagKeys.instanceId] === options.instanceId) return 'managed';
  return (options.manageUntaggedEnis ?? true) ? 'managed' : 'unmanaged';
}
