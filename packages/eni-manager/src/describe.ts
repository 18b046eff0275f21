import type { Filter } from '@aws-sdk/client-ec2';
import type { Ec2Api } from './ec2/client.js';
import { type Ec2Eni, toEc2Eni } from './ec2/eni.js';
import { eniError, isEniManagerError } from './errors.js';
import { awsId } from './shapes.js';

const ACTION = 'DescribeNetworkInterfaces';

/** Checks an ENI id's shape; throws `InvalidInput` before anything is sent. */
export function checkEniId(eniId: string): string {
  if (awsId('eni', eniId) === undefined)
    throw eniError('InvalidInput', `not an ENI id: ${JSON.stringify(eniId)}`);
  return eniId;
}

/** Every ENI matching `filters`, following `NextToken` (pages of 1000, as the reference). */
export async function describeEnisByFilter(ec2: Ec2Api, filters: Filter[]): Promise<Ec2Eni[]> {
  const result: Ec2Eni[] = [];
  let token: string | undefined;
  do {
    const out = await ec2.call(ACTION, {
      Filters: filters,
      MaxResults: 1000,
      ...(token === undefined ? {} : { NextToken: token }),
    });
    result.push(
      ...(out.NetworkInterfaces ?? []).map((ni, i) => toEc2Eni(ni, ACTION, `NetworkInterfaces[${i}]`)),
    );
    token = out.NextToken === '' ? undefined : out.NextToken;
  } while (token !== undefined);
  return result;
}

/** One ENI by id, or `undefined` when EC2 says `InvalidNetworkInterfaceID.NotFound`. */
export async function describeEni(ec2: Ec2Api, eniId: string): Promise<Ec2Eni | undefined> {
  try {
    const out = await ec2.call(ACTION, { NetworkInterfaceIds: [checkEniId(eniId)] });
    const all = out.NetworkInterfaces ?? [];
    const i = all.findIndex((ni) => ni.NetworkInterfaceId === eniId);
    return i < 0 ? undefined : toEc2Eni(all[i]!, ACTION, `NetworkInterfaces[${i}]`);
  } catch (error) {
    if (isEniManagerError(error, 'InvalidNetworkInterfaceID.NotFound')) return undefined;
    throw error;
  }
}

/**
 * ENIs by id. One call when all exist; when EC2 answers `NotFound` for the batch, each id is described alone and
 * missing ones are left out (so one deleted ENI does not hide the others; no error message is parsed).
 */
export async function describeEnisById(ec2: Ec2Api, eniIds: readonly string[]): Promise<Ec2Eni[]> {
  const ids = [...new Set(eniIds.map(checkEniId))];
  if (ids.length === 0) return [];
  try {
    const out = await ec2.call(ACTION, { NetworkInterfaceIds: ids });
    return (out.NetworkInterfaces ?? []).map((ni, i) => toEc2Eni(ni, ACTION, `NetworkInterfaces[${i}]`));
  } catch (error) {
    if (!isEniManagerError(error, 'InvalidNetworkInterfaceID.NotFound') || ids.length === 1) {
      if (isEniManagerError(error, 'InvalidNetworkInterfaceID.NotFound')) return [];
      throw error;
    }
    const each = await Promise.all(ids.map((id) => describeEni(ec2, id)));
    return each.filter((e): e is Ec2Eni => e !== undefined);
  }
}
