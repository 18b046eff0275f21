import { unaryCall } from '../rpc/grpc-client.js';
import {
  type AddNetworkReply,
  type AddNetworkRequest,
  type DelNetworkReply,
  type DelNetworkRequest,
  decode,
  encode,
  type GcReply,
  type GcRequest,
  Methods,
  type StatusReply,
  type StatusRequest,
} from '../rpc/messages.js';

/** The daemon calls the plugin makes, over the unix socket. */
export interface DaemonClient {
  addNetwork(req: Partial<AddNetworkRequest>): Promise<AddNetworkReply>;
  delNetwork(req: Partial<DelNetworkRequest>): Promise<DelNetworkReply>;
  /** CNI 1.1 GC: the daemon releases the addresses of attachments not in the list. */
  gc(req: Partial<GcRequest>): Promise<GcReply>;
  /** CNI 1.1 STATUS: whether the daemon can serve an ADD now. */
  status(req: Partial<StatusRequest>): Promise<StatusReply>;
  health(): Promise<number>;
}

/** A {@link DaemonClient} on `socketPath`, each call bounded by `timeoutMs`. */
export function daemonClient(socketPath: string, timeoutMs: number): DaemonClient {
  return {
    async addNetwork(req) {
      return decode(
        'AddNetworkReply',
        await unaryCall({
          socketPath,
          method: Methods.AddNetwork,
          request: encode('AddNetworkRequest', req),
          timeoutMs,
        }),
      );
    },
    async delNetwork(req) {
      return decode(
        'DelNetworkReply',
        await unaryCall({
          socketPath,
          method: Methods.DelNetwork,
          request: encode('DelNetworkRequest', req),
          timeoutMs,
        }),
      );
    },
    async gc(req) {
      return decode(
        'GcReply',
        await unaryCall({ socketPath, method: Methods.Gc, request: encode('GcRequest', req), timeoutMs }),
      );
    },
    async status(req) {
      return decode(
        'StatusReply',
        await unaryCall({
          socketPath,
          method: Methods.Status,
          request: encode('StatusRequest', req),
          timeoutMs,
        }),
      );
    },
    async health() {
      const bytes = await unaryCall({
        socketPath,
        method: Methods.HealthCheck,
        request: encode('HealthCheckRequest', { service: '' }),
        timeoutMs,
      });
      return decode('HealthCheckResponse', bytes).status;
    },
  };
}
