import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Clock } from './clock.js';
import type { Eni } from './model.js';
import type { Ec2State } from './state.js';

/** What an instance's IMDS needs. */
export interface ImdsDeps {
  /** Account state. */
  readonly state: Ec2State;
  /** The instance this IMDS belongs to. */
  readonly instanceId: string;
  /** Region name (for the identity document). */
  readonly region: string;
  /** Time source for token expiry and visibility. */
  readonly clock: Clock;
  /** Generates tokens. */
  readonly newToken: () => string;
}

/** Longest token lifetime IMDSv2 accepts (6 hours). */
export const MAX_TOKEN_TTL_SECONDS = 21_600;

type Tree = { [name: string]: string | Tree | undefined };

function text(res: ServerResponse, status: number, body: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'text/plain',
    'content-length': Buffer.byteLength(body),
    ...extra,
  });
  res.end(body);
}

/** The interfaces IMDS shows now: attached, not detaching, past their visibility delays. */
function imdsEnis(state: Ec2State, instanceId: string, now: number): Eni[] {
  return state
    .attachedEnis(instanceId)
    .filter(
      (e) =>
        e.attachment !== undefined &&
        e.attachment.detachingUntil === undefined &&
        e.attachment.imdsVisibleAt <= now &&
        e.visibleAt <= now,
    );
}

function macTree(state: Ec2State, eni: Eni, now: number): Tree {
  const subnet = state.subnet(eni.subnetId)!;
  const vpc = state.vpc(eni.vpcId)!;
  const shown = (l: readonly { value: string; imdsVisibleAt: number }[]) =>
    l.filter((a) => a.imdsVisibleAt <= now).map((a) => a.value);
  const lines = (l: readonly string[]) => (l.length > 0 ? l.join('\n') : undefined);
  const ipv4 = shown(eni.privateIps);
  const card = String(eni.attachment!.networkCardIndex);
  return {
    'device-number': String(eni.attachment!.deviceIndex),
    'interface-id': eni.id,
    'local-hostname': `ip-${eni.privateIps[0]!.value.replaceAll('.', '-')}.ec2.internal`,
    'local-ipv4s': lines(ipv4),
    'ipv4-prefix': lines(shown(eni.ipv4Prefixes)),
    ipv6s: lines(shown(eni.ipv6Addresses)),
    'ipv6-prefix': lines(shown(eni.ipv6Prefixes)),
    mac: eni.mac,
    'network-card': card,
    'network-card-index': card,
    'owner-id': state.accountId,
    'security-group-ids': lines(eni.groups),
    'security-groups': lines(eni.groups.map((g) => state.securityGroup(g)?.name ?? g)),
    'subnet-id': eni.subnetId,
    'subnet-ipv4-cidr-block': subnet.cidrBlock,
    'subnet-ipv6-cidr-blocks': subnet.ipv6CidrBlock,
    'vpc-id': eni.vpcId,
    'vpc-ipv4-cidr-block': vpc.cidrBlocks[0],
    'vpc-ipv4-cidr-blocks': lines(vpc.cidrBlocks),
    'vpc-ipv6-cidr-blocks': vpc.ipv6CidrBlock,
  };
}

/** Builds the instance's `meta-data` tree as of now. */
export function metadataTree(state: Ec2State, instanceId: string, now: number): Tree {
  const inst = state.instance(instanceId)!;
  const primary = state.eni(inst.primaryEniId)!;
  const macs: Tree = {};
  for (const e of imdsEnis(state, instanceId, now)) macs[e.mac] = macTree(state, e, now);
  return {
    'ami-id': 'ami-00000000000000000',
    hostname: `ip-${primary.privateIps[0]!.value.replaceAll('.', '-')}.ec2.internal`,
    'instance-id': inst.id,
    'instance-type': inst.type.name,
    'local-hostname': `ip-${primary.privateIps[0]!.value.replaceAll('.', '-')}.ec2.internal`,
    'local-ipv4': primary.privateIps[0]!.value,
    mac: primary.mac,
    ipv6: primary.ipv6Addresses[0]?.value,
    placement: {
      'availability-zone': inst.availabilityZone,
      region: inst.availabilityZone.slice(0, -1),
    },
    'security-groups': primary.groups.map((g) => state.securityGroup(g)?.name ?? g).join('\n'),
    network: { interfaces: { macs } },
  };
}

function listing(tree: Tree): string {
  return Object.entries(tree)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => (typeof v === 'string' ? k : `${k}/`))
    .join('\n');
}

/**
 * Creates (but does not start) an IMDSv2 server for one instance: `PUT /latest/api/token` with
 * `x-aws-ec2-metadata-token-ttl-seconds` (1–21600) issues a token; every GET needs a valid
 * `x-aws-ec2-metadata-token` (401 otherwise). Leading `//` in paths are collapsed, as the SDK sends them.
 */
export function createImdsServer(deps: ImdsDeps): Server {
  const tokens = new Map<string, number>();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!.replace(/^\/+/, '/');
    const now = deps.clock.now();
    if (path === '/latest/api/token') {
      if (req.method !== 'PUT') return text(res, 405, 'Method Not Allowed', { allow: 'PUT' });
      if (req.headers['x-forwarded-for'] !== undefined) return text(res, 403, 'Forbidden');
      const ttlText = req.headers['x-aws-ec2-metadata-token-ttl-seconds'];
      const ttl = typeof ttlText === 'string' && /^\d{1,6}$/.test(ttlText) ? Number(ttlText) : Number.NaN;
      if (!(ttl >= 1 && ttl <= MAX_TOKEN_TTL_SECONDS)) return text(res, 400, 'Bad Request');
      for (const [t, exp] of tokens) if (exp <= now) tokens.delete(t);
      const token = deps.newToken();
      tokens.set(token, now + ttl * 1000);
      return text(res, 200, token, { 'x-aws-ec2-metadata-token-ttl-seconds': String(ttl) });
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return text(res, 405, 'Method Not Allowed');
    const token = req.headers['x-aws-ec2-metadata-token'];
    const exp = typeof token === 'string' ? tokens.get(token) : undefined;
    if (exp === undefined || exp <= now) return text(res, 401, 'Unauthorized');
    if (deps.state.instance(deps.instanceId) === undefined) return text(res, 404, 'Not Found');
    if (path === '/latest/dynamic/instance-identity/document') {
      const inst = deps.state.instance(deps.instanceId)!;
      const primary = deps.state.eni(inst.primaryEniId)!;
      return text(
        res,
        200,
        JSON.stringify(
          {
            accountId: deps.state.accountId,
            architecture: 'x86_64',
            availabilityZone: inst.availabilityZone,
            imageId: 'ami-00000000000000000',
            instanceId: inst.id,
            instanceType: inst.type.name,
            pendingTime: new Date(inst.launchTime).toISOString(),
            privateIp: primary.privateIps[0]!.value,
            region: deps.region,
            version: '2017-09-30',
          },
          null,
          2,
        ),
        { 'content-type': 'application/json' },
      );
    }
    const base = '/latest/meta-data';
    if (path !== base && !path.startsWith(`${base}/`)) {
      if (path === '/latest' || path === '/latest/') return text(res, 200, 'dynamic\nmeta-data');
      return text(res, 404, 'Not Found');
    }
    const parts = path.slice(base.length).split('/').filter(Boolean);
    let node: string | Tree | undefined = metadataTree(deps.state, deps.instanceId, now);
    for (const p of parts) {
      node = typeof node === 'object' ? node[p] : undefined;
      if (node === undefined) return text(res, 404, 'Not Found');
    }
    if (typeof node === 'string') return text(res, 200, node);
    return text(res, 200, listing(node!));
  };
  return createServer((req, res) => {
    try {
      req.resume();
      handle(req, res);
    } catch (e) {
      text(res, 500, `Internal Error: ${String(e)}`);
    }
  });
}
