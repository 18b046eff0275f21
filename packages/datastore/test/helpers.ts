import { Datastore, type DatastoreOptions, type PodKey } from '@vpc-cni-kit/datastore';
import { InMemoryCheckpointer, ManualClock } from '@vpc-cni-kit/datastore/testing';

export function pod(n: number | string, ifName = 'eth0'): PodKey {
  return { networkName: 'aws-cni', containerID: `c-${n}`, ifName };
}

export function setup(opts: Partial<DatastoreOptions> = {}) {
  const clock = new ManualClock();
  const cp = new InMemoryCheckpointer();
  const ds = new Datastore({ clock, checkpointer: cp, ...opts });
  return { clock, cp, ds };
}

/** An ENI with device number n (primary when 0) and route table n+1 (254 for the primary). */
export function eni(ds: Datastore, n: number, extra: Record<string, unknown> = {}): string {
  const id = `eni-${n}`;
  ds.addEni({
    id,
    deviceNumber: n,
    routeTableId: n === 0 ? 254 : n + 1,
    subnetId: 'subnet-a',
    isPrimary: n === 0,
    ...extra,
  });
  return id;
}
