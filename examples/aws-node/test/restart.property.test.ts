/**
 * Property: across random interleavings of ADD, DEL, EC2 assignment (and release), IMDS lag, time passing,
 * the IMDS reconcile and SIGKILL + restart, no address is ever held by two live pods and no live pod loses its
 * address. Modelled at the daemon's restore/datastore level: the real datastore, pool loop, IPAM backend,
 * reconcile and start-up restore against the real ec2-simulator (EC2 over the real AWS SDK, IMDSv2 over
 * HTTP) on a manual clock; the kernel is a set of host veths, and a SIGKILL keeps only what the checkpoint
 * made durable.
 */
import { Datastore } from '@vpc-cni-kit/datastore';
import { InMemoryGroupCommitCheckpointer } from '@vpc-cni-kit/datastore/testing';
import { hostVethName, routeTableId } from '@vpc-cni-kit/routing-table';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../src/daemon/logger.js';
import type { PoolLoop } from '../src/daemon/pool-loop.js';
import { reconcileWithImds } from '../src/daemon/reconcile.js';
import { restoreNode } from '../src/daemon/restore.js';
import { readSavedState } from '../src/daemon/saved-state.js';
import { isStartError } from '../src/daemon/start-error.js';
import type { CniBackend } from '../src/rpc/grpc-server.js';
import { addRequest, delRequest, podKey, testBackend } from './support/backend.js';
import { testPool } from './support/pool.js';
import { startSimNode } from './support/sim-node.js';

type Op =
  | { k: 'add' }
  | { k: 'del'; pick: number }
  | { k: 'ec2' }
  | { k: 'lag'; ms: number }
  | { k: 'time'; ms: number }
  | { k: 'reconcile' }
  | { k: 'kill' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<Op>({ k: 'add' }) },
  { weight: 2, arbitrary: fc.nat(20).map<Op>((pick) => ({ k: 'del', pick })) },
  { weight: 3, arbitrary: fc.constant<Op>({ k: 'ec2' }) },
  { weight: 2, arbitrary: fc.constantFrom(0, 5_000, 120_000).map<Op>((ms) => ({ k: 'lag', ms })) },
  { weight: 2, arbitrary: fc.constantFrom(1_000, 20_000, 70_000).map<Op>((ms) => ({ k: 'time', ms })) },
  { weight: 1, arbitrary: fc.constant<Op>({ k: 'reconcile' }) },
  { weight: 2, arbitrary: fc.constant<Op>({ k: 'kill' }) },
);

interface Pod {
  n: number;
  address: string;
  veth: string;
}

/** One node: the simulator, the kernel (host veths) and the durable checkpoint survive a SIGKILL. */
async function runScenario(imdsOnly: boolean, ops: readonly Op[]): Promise<void> {
  const { sim, clock, node, metadata, eni, admin, close } = await startSimNode();
  try {
    const primaryEni = node.primaryEni.eniId;
    const veths = new Map<string, string>(); // the kernel: host veth → pod address
    const live: Pod[] = [];
    let durable: string | undefined; // what a SIGKILL leaves on disk
    let podSeq = 0;

    interface Daemon {
      datastore: Datastore;
      checkpointer: InMemoryGroupCommitCheckpointer;
      pool: PoolLoop;
      backend: CniBackend;
    }
    let daemon: Daemon | undefined;

    const start = async (): Promise<void> => {
      const checkpointer = new InMemoryGroupCommitCheckpointer(durable);
      const datastore = new Datastore({ clock, checkpointer, cooldownMs: 30_000 });
      const pool = testPool(datastore, eni, 2, {
        limits: { maxEnis: 1, ipv4PerEni: 10, maxPods: 9 },
        now: () => clock.now(),
        routeTableId,
      });
      try {
        await restoreNode({
          datastore,
          checkpoint: readSavedState(checkpointer, 'ipam.json').checkpoint,
          listImdsEnis: () => metadata.listEnis(),
          ...(imdsOnly ? {} : { describeEnis: () => eni.describeEnis() }),
          adoptEni: (e) => pool.adoptEni(e),
          podExists: (entry) =>
            veths.has(hostVethName('eni', entry.metadata.k8sPodNamespace!, entry.metadata.k8sPodName!)),
          confirmWaitMs: 10_000,
          retryMs: 2_000,
          // Waiting lets time pass (IMDS catches up on the simulator's clock).
          sleep: async (ms) => clock.advance(ms),
          now: () => clock.now(),
          log: silentLogger,
        });
      } catch (e) {
        // Refusing to start is allowed (IMDS-only, lag longer than the wait): the daemon stays down.
        if (isStartError(e, 'RestoreUnconfirmed')) return;
        throw e;
      }
      await datastore.flush();
      const backend = testBackend(
        datastore,
        {
          async setup(pod) {
            veths.set(pod.hostVeth, pod.podIp);
            return { hostVeth: pod.hostVeth, hostMac: '02:00:00:00:00:01' };
          },
          async teardown() {},
          hostVethName,
        },
        { now: () => clock.now() },
      );
      daemon = { datastore, checkpointer, pool, backend };
    };

    const check = (after: string) => {
      const addresses = live.map((p) => p.address);
      expect(new Set(addresses).size, `two live pods share an address after ${after}`).toBe(addresses.length);
      if (daemon === undefined) return;
      for (const p of live) {
        expect(
          daemon.datastore.findByPod(podKey(p.n))?.address,
          `pod p${p.n} lost ${p.address} after ${after}`,
        ).toBe(p.address);
      }
    };

    await start();
    for (const [i, o] of ops.entries()) {
      const step = `step ${i} (${JSON.stringify(o)})`;
      switch (o.k) {
        case 'add': {
          if (daemon === undefined) break;
          const n = podSeq++;
          const reply = await daemon.backend.addNetwork(addRequest(n));
          if (reply.Success) {
            const address = reply.IPAllocationMetadata![0]!.IPv4Addr;
            expect(
              live.find((p) => p.address === address),
              `${address} handed to p${n} while live`,
            ).toBeUndefined();
            live.push({ n, address, veth: hostVethName('eni', 'default', `p${n}`) });
          }
          break;
        }
        case 'del': {
          if (daemon === undefined || live.length === 0) break;
          const pod = live[o.pick % live.length]!;
          expect((await daemon.backend.delNetwork(delRequest(pod.n))).Success).toBe(true);
          // The runtime then removes the pod's namespace, and the veth with it.
          veths.delete(pod.veth);
          live.splice(live.indexOf(pod), 1);
          break;
        }
        case 'ec2':
          if (imdsOnly) {
            // In IMDS-only mode the daemon never calls EC2: someone else assigns, the reconcile adopts.
            await admin
              .call('AssignPrivateIpAddresses', {
                NetworkInterfaceId: primaryEni,
                SecondaryPrivateIpAddressCount: 2,
              })
              .catch(() => undefined); // the ENI may be full
          } else if (daemon !== undefined) {
            await daemon.pool.tick(); // assign or release, through EC2
          }
          break;
        case 'lag':
          sim.faults.add({ kind: 'imds-delay', ms: o.ms });
          break;
        case 'time':
          clock.advance(o.ms);
          break;
        case 'reconcile':
          if (daemon === undefined) break;
          await reconcileWithImds({
            datastore: daemon.datastore,
            metadata,
            ...(imdsOnly ? {} : { describeEnis: (ids) => eni.describeEnis(ids) }),
            log: silentLogger,
            now: () => clock.now(),
            adoptEni: (e) => daemon!.pool.adoptEni(e),
            teardownEni: async () => {},
            recentlyReleased: daemon.pool.recentlyReleased,
          });
          await daemon.datastore.flush();
          break;
        case 'kill':
          // SIGKILL: memory is gone; the last durable checkpoint, the veths and EC2 stay.
          if (daemon !== undefined) durable = daemon.checkpointer.read();
          daemon = undefined;
          await start();
          break;
      }
      check(step);
    }
  } finally {
    await close();
  }
}

describe('restart property', () => {
  it('no address is ever held by two live pods, and no live pod loses its address', async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(op, { minLength: 5, maxLength: 30 }), runScenario),
      { numRuns: 100 },
    );
  }, 120_000);

  it('the finding: an address assigned by EC2, taken by a pod, then SIGKILL while IMDS lags', async () => {
    await runScenario(false, [
      { k: 'lag', ms: 120_000 },
      { k: 'ec2' },
      { k: 'add' },
      { k: 'add' },
      { k: 'kill' },
      { k: 'time', ms: 130_000 },
      { k: 'reconcile' },
      { k: 'ec2' },
      { k: 'add' },
      { k: 'add' },
      { k: 'add' },
    ]);
  }, 30_000);
});
