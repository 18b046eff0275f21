import { rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { DropArgument } from 'node:net';
import type { Datastore } from '@vpc-cni-kit/datastore';
import { parseBindAddress } from '../config/bind-address.js';
import type { AwsNodeConfig } from '../config/config.js';
import type { EniConfigStatus } from './custom-networking.js';
import type { FailureRecord } from './failures.js';
import type { Logger } from './logger.js';
import type { DaemonMetrics } from './metrics.js';
import { checkSocketPath } from './socket-path.js';
import { StartError } from './start-error.js';

/** A listening HTTP server. */
export interface HttpEndpoint {
  /** Where it listens: `host:port` (with the real port) or `unix:<path>`. */
  address: string;
  close(): Promise<void>;
}

/**
 * How long a client of the metrics and introspection endpoints may take, in milliseconds. Node's defaults let one
 * that sends its headers a byte at a time hold a connection for 60 s, and one that never finishes a request body
 * for 300 s (each plus up to 30 s before the check runs). The real clients send a whole GET at once: a Prometheus
 * scrape (10 s timeout by default), `aws-node status`, a `curl` by an operator. A connection is closed when its
 * headers are not in after `headersMs` or its whole request after `requestMs`, checked every `checkEveryMs`;
 * between requests a kept-alive connection stays open `keepAliveMs` (Node's default, written down). Headers
 * are limited to Node's default 16 KiB (`maxHeaderSize`), where a larger request is answered 431.
 *
 * Each endpoint holds at most `maxConnections` connections at once; one more is closed as soon as it is accepted,
 * before a byte of it is read (Node's `server.maxConnections`), and counted (see `connection-drops.ts`). The time
 * limits bound how long one connection lasts, not how many a client opens: without a cap any pod on the node
 * could keep thousands open on the metrics port (`0.0.0.0:61678` by default), each a file descriptor and some
 * memory in the process that also answers the CNI plugin's ADD and DEL. 64 is several times what the real
 * clients hold together — a Prometheus scrape or two (one connection each), `aws-node status`, an operator's
 * `curl` — and small next to the daemon's file-descriptor limit.
 */
export const HTTP_LIMITS = {
  headersMs: 5_000,
  requestMs: 10_000,
  keepAliveMs: 5_000,
  checkEveryMs: 1_000,
  maxConnections: 64,
} as const;

/**
 * Told of each connection an endpoint closed because it already held {@link HTTP_LIMITS}' `maxConnections`, and
 * stopped when the endpoint closes.
 */
export interface DropObserver {
  /** One connection from `peer` (its IP address; none on a unix socket) was closed unread. */
  dropped(peer: string | undefined): void;
  /** The endpoint is closed: nothing more will be dropped. */
  stop(): void;
}

/** Sets {@link HTTP_LIMITS} on `server`, before it listens (the checks start with it). */
function limit(server: Server, drops: DropObserver | undefined): void {
  server.headersTimeout = HTTP_LIMITS.headersMs;
  server.requestTimeout = HTTP_LIMITS.requestMs;
  server.keepAliveTimeout = HTTP_LIMITS.keepAliveMs;
  // Read when the server starts listening; @types/node declares it only as a createServer option.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
    HTTP_LIMITS.checkEveryMs;
  // Node closes a connection over the cap as it accepts it, and says so with 'drop'.
  server.maxConnections = HTTP_LIMITS.maxConnections;
  if (drops !== undefined) server.on('drop', (d?: DropArgument) => drops.dropped(d?.remoteAddress));
}

/**
 * Listens on `host:port`, `:port`, `[ipv6]:port` or `unix:<path>` (see {@link parseBindAddress}), with
 * {@link HTTP_LIMITS}. A stale socket at a unix path is replaced; a file or directory there is refused (never
 * deleted), with `setting` (the variable that named the address) in the hint. `drops` is told of each connection
 * closed over the cap.
 */
export async function listen(
  server: Server,
  bind: string,
  setting = 'its bind address',
  drops?: DropObserver,
): Promise<HttpEndpoint> {
  const at = parseBindAddress(bind);
  if ('problem' in at)
    throw new StartError('ListenFailed', `cannot listen on ${JSON.stringify(bind)}: ${at.problem}`);
  // A stale socket is replaced; anything else at a unix path (an operator's file) is refused, never deleted.
  if (at.kind === 'unix') await checkSocketPath(at.path, setting);
  limit(server, drops);
  try {
    if (at.kind === 'unix') await rm(at.path, { force: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      if (at.kind === 'unix') server.listen(at.path, resolve);
      else server.listen(at.port, at.host, resolve);
    });
  } catch (e) {
    throw new StartError(
      'ListenFailed',
      `cannot listen on ${bind}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      {
        cause: e,
      },
    );
  }
  const a = server.address();
  const address =
    at.kind === 'unix'
      ? bind
      : typeof a === 'object' && a !== null
        ? `${at.host ?? '0.0.0.0'}:${a.port}`
        : bind;
  return {
    address,
    close: async () => {
      await closeServer(server);
      drops?.stop();
    },
  };
}

/** How long {@link closeServer} lets requests in flight finish before it drops their connections. */
const CLOSE_GRACE_MS = 1000;

/**
 * Stops listening and ends every connection: idle ones at once, the rest after `graceMs`. `server.close()` alone
 * waits for each connection to end, and once it has stopped the server's timers a client that sent half a request
 * (or holds one open) would keep it waiting for ever, and the daemon's shutdown with it.
 */
function closeServer(server: Server, graceMs = CLOSE_GRACE_MS): Promise<void> {
  return new Promise<void>((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * Answers `405` (with `Allow: GET, HEAD`) to any method but GET and HEAD: the endpoints only serve documents, so
 * another method is a client's mistake. Returns whether it answered.
 */
function refuseMethod(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return false;
  res
    .writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json' })
    .end(JSON.stringify({ error: 'method not allowed' }));
  return true;
}

/** An HTTP endpoint listening before the daemon can answer on it (see {@link listenEarly}). */
export interface EarlyHttpEndpoint extends HttpEndpoint {
  /** From now on requests go to `server`'s request handler (a server that is not listening itself). */
  serve(server: Server): void;
}

/**
 * Listens on `bind` at once and answers every request `503 starting` until {@link EarlyHttpEndpoint.serve} hands
 * it the real server: the daemon takes its ports before it changes the node, so a port in use stops the start
 * while the node is still as it was (ADR 0034). `drops` is told of each connection closed over the cap.
 */
export async function listenEarly(
  bind: string,
  setting?: string,
  drops?: DropObserver,
): Promise<EarlyHttpEndpoint> {
  let target: Server | undefined;
  const endpoint = await listen(
    createServer((req, res) => {
      if (target !== undefined) target.emit('request', req, res);
      else res.writeHead(503, { 'retry-after': '1' }).end('aws-node is starting\n');
    }),
    bind,
    setting,
    drops,
  );
  return {
    ...endpoint,
    serve: (server) => {
      target = server;
    },
  };
}

const RANDOMIZE_ENUM = { none: 0, hashrandom: 1, prng: 2 } as const;
const COMMANDS = [
  '/v1/enis',
  '/v1/unmanaged-enis',
  '/v1/failures',
  '/v1/eni-configs',
  '/v1/networkutils-env-settings',
  '/v1/ipamd-env-settings',
  '/v1/warm-pool',
  '/v1/branch-pods',
];

/** A prefix length as Go marshals a `net.IPMask`: base64 of 4 (IPv4) or 16 (IPv6) bytes. */
function maskOf(len: number, bytes: 4 | 16): string {
  const out = Buffer.alloc(bytes);
  for (let bit = 0; bit < len; bit++) out[bit >> 3]! |= 0x80 >> (bit & 7);
  return out.toString('base64');
}

/** The reference's `/v1/enis` document, with container ids and interface names blanked. */
export function enisDocument(ds: Datastore): Record<string, unknown> {
  const stats = ds.stats();
  const byAddress = new Map(ds.assignments().map((a) => [a.address, a]));
  const released = ds.releasedAddresses();
  const cards: Record<string, { TotalIPs: number; AssignedIPs: number; ENIs: Record<string, unknown> }> = {};
  for (const eni of stats.enis) {
    const card = (cards[String(eni.networkCard)] ??= { TotalIPs: 0, AssignedIPs: 0, ENIs: {} });
    card.TotalIPs += eni.totalIPs;
    card.AssignedIPs += eni.assignedIPs;
    const cidrs: Record<string, unknown> = {};
    const cidrs6: Record<string, unknown> = {};
    for (const c of eni.cidrs) {
      const [ip, len] = c.cidr.split('/');
      const v6 = ip!.includes(':');
      const addresses: Record<string, unknown> = {};
      for (const a of byAddress.values()) {
        if (a.cidr !== c.cidr) continue;
        addresses[a.address] = {
          Address: a.address,
          IPAMKey: { networkName: a.key.networkName, containerID: '', ifName: '' },
          IPAMMetadata: {
            k8sPodNamespace: a.metadata.namespace ?? '',
            k8sPodName: a.metadata.name ?? '',
            ...(a.metadata.interfacesCount === undefined
              ? {}
              : { interfacesCount: a.metadata.interfacesCount }),
          },
          AssignedTime: new Date(a.assignedAt).toISOString(),
          UnassignedTime: '0001-01-01T00:00:00Z',
        };
      }
      // Addresses given back keep their history, as in the reference: last assigned and released times.
      for (const r of released) {
        if (r.eniId !== eni.id || r.cidr !== c.cidr) continue;
        addresses[r.address] = {
          Address: r.address,
          IPAMKey: { networkName: '', containerID: '', ifName: '' },
          IPAMMetadata: {},
          AssignedTime: new Date(r.assignedAt).toISOString(),
          UnassignedTime: new Date(r.unassignedAt).toISOString(),
        };
      }
      // The reference keeps IPv6 prefixes apart, marked with their family.
      (v6 ? cidrs6 : cidrs)[c.cidr] = {
        Cidr: { IP: ip, Mask: maskOf(Number(len), v6 ? 16 : 4) },
        IPAddresses: addresses,
        IsPrefix: c.isPrefix,
        AddressFamily: v6 ? '6' : '',
      };
    }
    card.ENIs[eni.id] = {
      ID: eni.id,
      IsPrimary: eni.isPrimary,
      IsTrunk: eni.isTrunk,
      IsEFA: eni.isEfa,
      DeviceNumber: eni.deviceNumber,
      AvailableIPv4Cidrs: cidrs,
      IPv6Cidrs: cidrs6,
      IsExcludedForPodIPs: eni.excluded,
      RouteTableID: eni.routeTableId,
      SubnetID: eni.subnetId,
    };
  }
  return cards;
}

/** Live state the introspection server shows besides the datastore. */
export interface IntrospectionSources {
  /** Custom networking's last ENIConfig lookup (`undefined` when custom networking is off). */
  readonly eniConfigs?: () => EniConfigStatus | undefined;
  /** Attached ENIs the daemon leaves alone (`/v1/unmanaged-enis`). */
  readonly unmanagedEnis?: () => unknown;
  /**
   * The pool loop's last decision and prefix fallback (`/v1/warm-pool`), and with the adaptive policy its last
   * targets and the pods bound to the node it counts.
   */
  readonly warmPool?: () => unknown;
  /** Security groups for pods: the branch pods plumbed (`/v1/branch-pods`); absent when `ENABLE_POD_ENI` is off. */
  readonly branchPods?: () => Promise<unknown>;
  /** The daemon's most recent failures, newest first (`/v1/failures`). */
  readonly failures?: () => readonly FailureRecord[];
}

/** The introspection server (the reference's `127.0.0.1:61679` paths, and `/v1/unmanaged-enis`). */
export function introspectionServer(
  ds: Datastore,
  config: AwsNodeConfig,
  log: Logger,
  sources: IntrospectionSources = {},
): Server {
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  return createServer((req, res) => {
    log.debug('introspection request', { path: req.url });
    if (refuseMethod(req, res)) return;
    switch ((req.url ?? '/').split('?')[0]) {
      case '/v1/enis':
        return json(res, 200, enisDocument(ds));
      case '/v1/eni-configs': {
        const status = sources.eniConfigs?.();
        if (status === undefined)
          return json(res, 404, { error: 'no ENIConfig: custom networking is not enabled' });
        return json(res, 200, status);
      }
      case '/v1/unmanaged-enis':
        return json(res, 200, sources.unmanagedEnis?.() ?? []);
      case '/v1/warm-pool':
        return json(res, 200, sources.warmPool?.() ?? {});
      case '/v1/failures':
        return json(res, 200, sources.failures?.() ?? []);
      case '/v1/branch-pods': {
        const list = sources.branchPods;
        if (list === undefined) return json(res, 200, []);
        list().then(
          (pods) => json(res, 200, pods),
          (e: unknown) => json(res, 500, { error: e instanceof Error ? e.message : String(e) }),
        );
        return;
      }
      case '/v1/networkutils-env-settings':
        return json(res, 200, {
          AWS_VPC_K8S_CNI_CONNMARK: config.connmark,
          AWS_VPC_K8S_CNI_EXCLUDE_SNAT_CIDRS: config.excludeSnatCidrs,
          AWS_VPC_K8S_CNI_EXTERNALSNAT: config.externalSnat,
          AWS_EXTERNAL_SERVICE_CIDRS: config.externalServiceCidrs,
          AWS_VPC_ENI_MTU: config.eniMtu,
          AWS_VPC_K8S_CNI_VETHPREFIX: config.vethPrefix,
          AWS_VPC_CNI_NODE_PORT_SUPPORT: config.nodePortSupport,
          AWS_VPC_K8S_CNI_RANDOMIZESNAT: RANDOMIZE_ENUM[config.randomizeSnat],
        });
      case '/v1/ipamd-env-settings':
        return json(res, 200, {
          WARM_IP_TARGET: config.warmIpTarget,
          WARM_ENI_TARGET: config.warmEniTarget,
          AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG: config.customNetworking,
          AWS_MANAGE_ENIS_NON_SCHEDULABLE: config.manageEnisNonSchedulable,
          ENABLE_SUBNET_DISCOVERY: config.subnetDiscovery,
          ENABLE_POD_ENI: config.podEni.enabled,
          POD_SECURITY_GROUP_ENFORCING_MODE: config.podEni.mode,
          // This daemon's own setting (the reference has none): which warm-pool policy the pool loop runs.
          WARM_POOL_POLICY: config.warmPoolPolicy,
        });
      default:
        return json(res, 200, { AvailableCommands: COMMANDS });
    }
  });
}

/** The Prometheus endpoint (`/metrics`). */
export function metricsServer(metrics: DaemonMetrics, ds: Datastore): Server {
  return createServer((req, res) => {
    if (refuseMethod(req, res)) return;
    if ((req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404).end('not found\n');
      return;
    }
    metrics.updateFromDatastore(ds);
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (e: unknown) => res.writeHead(500).end(String(e)),
    );
  });
}
