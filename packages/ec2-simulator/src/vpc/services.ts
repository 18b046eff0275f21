import type { Server as HttpServer } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { withNetnsSync } from '@vpc-cni-kit/netlink';
import type { Clock } from '../clock.js';
import { createImdsServer } from '../imds.js';
import type { Ec2State } from '../state.js';
import { VpcError } from './errors.js';

/** A listener inside a namespace plus every connection it accepted. */
export interface NamespaceService {
  /** Port it listens on (inside its namespace). */
  readonly port: number;
  /** Stops listening and destroys every open connection. */
  close(): Promise<void>;
}

const unmapped = (a: string | undefined): string => (a?.startsWith('::ffff:') ? a.slice(7) : (a ?? ''));

/**
 * Listens on `port` (every address) inside a namespace. Node creates and binds the socket synchronously
 * when no host is given, so it is made while this thread is switched into the namespace; the namespace
 * is one this run owns, so nothing else listens there.
 */
function listenInNetns(
  op: string,
  netnsPath: string,
  port: number,
  onSocket: (s: Socket) => void,
): Promise<NamespaceService> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
    onSocket(s);
  });
  return new Promise((resolve, reject) => {
    server.once('error', (e) => reject(new VpcError('VPC_DATAPLANE', op, String(e.message), { cause: e })));
    try {
      withNetnsSync(netnsPath, () => server.listen(port));
    } catch (e) {
      reject(new VpcError('VPC_DATAPLANE', op, `cannot listen in ${netnsPath}`, { cause: e }));
      return;
    }
    server.once('listening', () => {
      resolve({
        port,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** What the IMDS service needs. */
export interface ImdsServiceDeps {
  /** Account state. */
  readonly state: Ec2State;
  /** Region (identity document). */
  readonly region: string;
  /** Time source for tokens and visibility. */
  readonly clock: Clock;
  /** The instance that owns a source address, if any. */
  readonly ownerOf: (address: string) => string | undefined;
  /** Address IMDS answers on (other local addresses are refused). */
  readonly address: string;
}

/**
 * IMDS as the VPC router serves it: one listener on `169.254.169.254:80` in the router namespace; each
 * connection is answered by the IMDSv2 server of the instance that owns the connection's source address
 * (any address of any ENI attached to it, so SNATed and un-SNATed pod traffic both work); other sources
 * are cut off.
 */
export async function startImdsService(
  routerNetns: string,
  deps: ImdsServiceDeps,
): Promise<NamespaceService> {
  const perInstance = new Map<string, HttpServer>();
  const server = (instanceId: string): HttpServer => {
    let s = perInstance.get(instanceId);
    if (!s) {
      s = createImdsServer({
        state: deps.state,
        instanceId,
        region: deps.region,
        clock: deps.clock,
        newToken: () =>
          Buffer.from(`${deps.state.ids.requestId()}${deps.state.ids.requestId()}`).toString('base64url'),
      });
      perInstance.set(instanceId, s);
    }
    return s;
  };
  return listenInNetns('imds.listen', routerNetns, 80, (socket) => {
    const owner = deps.ownerOf(unmapped(socket.remoteAddress));
    if (unmapped(socket.localAddress) !== deps.address || owner === undefined) {
      socket.destroy();
      return;
    }
    server(owner).emit('connection', socket);
  });
}

/**
 * The EC2 endpoint as a host on the simulated internet: a listener on port 80 in the internet namespace
 * whose connections are spliced, inside this process, to the simulator's EC2 listener on loopback (so
 * rate limits, faults and the call log are shared with every other client).
 */
export function startEc2Service(
  internetNetns: string,
  target: { host: string; port: number },
): Promise<NamespaceService> {
  return listenInNetns('ec2.listen', internetNetns, 80, (socket) => {
    const upstream = connect(target.port, target.host);
    upstream.on('error', () => socket.destroy());
    socket.once('close', () => upstream.destroy());
    upstream.once('close', () => socket.destroy());
    socket.pipe(upstream);
    upstream.pipe(socket);
  });
}
