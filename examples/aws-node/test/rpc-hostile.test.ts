/**
 * The daemon's gRPC socket against requests no plugin would send: the real IPAM backend over a real datastore
 * behind the real server on a unix socket, called with the plugin's own client. Each bad request is refused with a
 * short message naming the field, nothing is assigned, released, logged at length or checkpointed, and the server
 * goes on answering.
 */
import { join } from 'node:path';
import { Datastore } from '@vpc-cni-kit/datastore';
import { InMemoryGroupCommitCheckpointer, ManualClock } from '@vpc-cni-kit/datastore/testing';
import { hostVethName } from '@vpc-cni-kit/routing-table';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlumbRequest, PodPlumber } from '../src/daemon/ipam-backend.js';
import { GrpcStatus, isGrpcCallError, unaryCall } from '../src/rpc/grpc-client.js';
import { type RpcServer, startRpcServer } from '../src/rpc/grpc-server.js';
import {
  type AddNetworkRequest,
  type DelNetworkRequest,
  decode,
  encode,
  type Messages,
  Methods,
} from '../src/rpc/messages.js';
import { addRequest, delRequest, testBackend } from './support/backend.js';
import { recordingLogger } from './support/logger.js';

class CountingPlumber implements PodPlumber {
  setups = 0;
  teardowns = 0;
  async setup(pod: PlumbRequest) {
    this.setups++;
    return { hostVeth: pod.hostVeth, hostMac: '02:00:00:00:00:01' };
  }
  async teardown() {
    this.teardowns++;
  }
  hostVethName(prefix: string, namespace: string, name: string) {
    return hostVethName(prefix, namespace, name);
  }
}

// As long as the plugin's client sends (its requests stop at 64 KiB); far beyond any name.
const HUGE = 'a'.repeat(60_000);

describe('AddNetwork and DelNetwork with hostile fields, over the socket', () => {
  const dir = scratchDir('vck-rpch-');
  const socketPath = join(dir.path, 'ipamd.sock');
  const cp = new InMemoryGroupCommitCheckpointer();
  const datastore = new Datastore({ clock: new ManualClock(), checkpointer: cp, cooldownMs: 0 });
  const plumber = new CountingPlumber();
  const log = recordingLogger();
  const failures: { code: string; message: string; pod: string }[] = [];
  let server: RpcServer;

  beforeAll(async () => {
    datastore.addEni({ id: 'eni-0', deviceNumber: 0, routeTableId: 254, subnetId: 's', isPrimary: true });
    for (let i = 0; i < 4; i++) datastore.addCidr('eni-0', `10.0.1.${10 + i}/32`);
    server = await startRpcServer({
      socketPath,
      backend: testBackend(datastore, plumber, { log, onAddFailure: (f) => failures.push(f) }),
    });
  });
  afterAll(async () => {
    await server.close();
    dir.remove();
  });

  /** One call of `method` over the socket with the plugin's client, its reply decoded. */
  const call =
    <
      Req extends 'AddNetworkRequest' | 'DelNetworkRequest',
      Res extends 'AddNetworkReply' | 'DelNetworkReply',
    >(
      method: string,
      reqType: Req,
      resType: Res,
    ) =>
    async (req: Messages[Req]): Promise<Messages[Res]> =>
      decode(
        resType,
        await unaryCall({ socketPath, method, request: encode(reqType, req), timeoutMs: 5000 }),
      );
  const add = call(Methods.AddNetwork, 'AddNetworkRequest', 'AddNetworkReply');
  const del = call(Methods.DelNetwork, 'DelNetworkRequest', 'DelNetworkReply');

  it('refuses an AddNetwork whose names are not names, keeping, logging and assigning nothing of them', async () => {
    const cases: [Partial<AddNetworkRequest>, string][] = [
      [{ K8S_POD_NAME: HUGE }, 'K8S_POD_NAME "aaaa'],
      [{ K8S_POD_NAMESPACE: 'Kube_System' }, 'K8S_POD_NAMESPACE "Kube_System" is not a Kubernetes name'],
      [{ K8S_POD_NAMESPACE: 'a/b' }, 'K8S_POD_NAMESPACE "a/b"'],
      [{ ContainerID: HUGE }, 'ContainerID "aaaa'],
      [{ ContainerID: '../../etc' }, 'ContainerID "../../etc" must be letters'],
      [{ ContainerID: '' }, 'ContainerID is required'],
      [{ NetworkName: 'aws cni' }, 'NetworkName "aws cni" must be letters'],
      [{ K8S_POD_INFRA_CONTAINER_ID: 'x;y' }, 'K8S_POD_INFRA_CONTAINER_ID "x;y"'],
      [{ IfName: 'eth0/../x' }, 'IfName "eth0/../x" is not an interface name: must not contain /'],
      // Without daemon-side plumbing (the reference's plugin) too: the key is kept in the checkpoint.
      [
        { IfName: 'averyveryverylongname', PodPlumbing: false },
        'IfName "averyveryverylongname" is not an interface name: is longer than 15',
      ],
      [{ ClientVersion: HUGE }, 'ClientVersion "aaaa'],
    ];
    for (const [fields, message] of cases) {
      const reply = await add({ ...addRequest(1), ...fields });
      expect(reply.Success, JSON.stringify(fields).slice(0, 80)).toBe(false);
      expect(reply.FailureCode).toBe('InvalidRequest');
      expect(reply.FailureMessage).toContain(message);
      expect(reply.FailureMessage.length).toBeLessThan(300);
    }
    expect(datastore.assignments()).toEqual([]);
    expect(cp.json()).toBeUndefined();
    expect(plumber.setups).toBe(0);
    // Neither the log nor the failures ring (shown by /v1/failures) holds the huge name.
    expect(Math.max(...log.lines.map((l) => l.length))).toBeLessThan(1000);
    expect(Math.max(...failures.map((f) => f.message.length + f.pod.length))).toBeLessThan(1000);
  });

  it('refuses a DelNetwork with bad fields or an unknown Reason (a metric label) with INVALID_ARGUMENT, releasing nothing', async () => {
    expect((await add(addRequest(2))).Success).toBe(true);
    for (const [fields, message] of [
      [{ K8S_POD_NAME: HUGE }, 'K8S_POD_NAME'],
      [{ Reason: 'x'.repeat(10_000) }, 'Reason "xxxx'],
      [{ Reason: 'Whatever' }, 'Reason "Whatever" must be one of PodDeleted, SetupNSFailed'],
      [{ K8S_POD_UID: 'u u' }, 'K8S_POD_UID "u u"'],
      [{ ContainerID: 'c 2' }, 'ContainerID "c 2"'],
    ] as [Partial<DelNetworkRequest>, string][]) {
      const e = await del({ ...delRequest(2), ...fields }).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(isGrpcCallError(e) && e.grpcStatus).toBe(GrpcStatus.INVALID_ARGUMENT);
      expect((e as Error).message).toContain(message);
      expect((e as Error).message.length).toBeLessThan(400);
    }
    expect(datastore.assignments().map((a) => a.key.containerID)).toEqual(['c-2']);
    // A well-formed DEL releases it, and again (already gone) still succeeds, as does one for another network.
    expect((await del(delRequest(2))).Success).toBe(true);
    expect((await del(delRequest(2))).Success).toBe(true);
    expect((await del({ ...delRequest(2), NetworkName: 'other-net' })).Success).toBe(true);
    expect(datastore.assignments()).toEqual([]);
  });

  it('answers bytes that are no message with an error and goes on serving', async () => {
    const e = await unaryCall({
      socketPath,
      method: Methods.AddNetwork,
      request: Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]),
      timeoutMs: 5000,
    }).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(isGrpcCallError(e)).toBe(true);
    expect((await add(addRequest(3))).Success).toBe(true);
  });
});
