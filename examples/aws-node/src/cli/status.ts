/**
 * `aws-node status`: what the daemon holds, as tables for an operator (or `--json`), read from its
 * introspection endpoint (`/v1/enis`, `/v1/ipamd-env-settings`, `/v1/failures`) instead of raw `curl` JSON.
 */
import { request } from 'node:http';
import { EXIT_USAGE, readOptions } from '@vpc-cni-kit/command-line';
import { familyBits, ipFamily } from '@vpc-cni-kit/ip-address';
import { type BindAddress, parseBindAddress } from '../config/bind-address.js';
import { programVersion } from '../version.js';
import { formatTable } from './table.js';

/** One address in `/v1/enis`. */
interface AddressEntry {
  Address: string;
  IPAMMetadata?: { k8sPodNamespace?: string; k8sPodName?: string };
  AssignedTime?: string;
  /** Go's zero time while assigned; when it was released for an address kept for its history. */
  UnassignedTime?: string;
}

/** Go's zero `time.Time`, the `UnassignedTime` of an address in use. */
const GO_ZERO_TIME = '0001-01-01T00:00:00Z';
/** One ENI in `/v1/enis`. */
interface EniEntry {
  ID: string;
  IsPrimary: boolean;
  DeviceNumber: number;
  AvailableIPv4Cidrs: Record<string, CidrEntry>;
  /** IPv6 mode: the node's /80 (absent from older documents). */
  IPv6Cidrs?: Record<string, CidrEntry>;
}
/** One CIDR of an ENI in `/v1/enis`. */
interface CidrEntry {
  IPAddresses: Record<string, AddressEntry>;
  IsPrefix: boolean;
}
/** The reference's `/v1/enis` document: per network card, the totals and the ENIs. */
export type EnisDocument = Record<
  string,
  { TotalIPs: number; AssignedIPs: number; ENIs: Record<string, EniEntry> }
>;

/** One entry of `/v1/failures` (the daemon's `FailureRecord`). */
export interface FailureEntry {
  time: string;
  source: string;
  action: string;
  code: string;
  reason: string;
  pod?: string;
}

/** One entry of `/v1/branch-pods` (the daemon's `BranchPodRecord`). */
export interface BranchPodEntry {
  namespace: string;
  name: string;
  address: string;
  vlanId: number;
  branchEniId: string;
  trunkEniId: string;
  trunkInterface: string;
  hostVeth: string;
  mode: string;
}

/** The "Branch pods" table (security groups for pods): each pod's VLAN, branch ENI and trunk. */
export function renderBranchPods(pods: readonly BranchPodEntry[]): string {
  if (pods.length === 0) return 'Branch pods\n(none)';
  const rows = [['POD', 'ADDRESS', 'VLAN', 'BRANCH ENI', 'TRUNK', 'MODE', 'HOST VETH']];
  const sorted = [...pods].sort((a, b) => a.vlanId - b.vlanId);
  for (const p of sorted)
    rows.push([
      `${p.namespace}/${p.name}`,
      p.address,
      String(p.vlanId),
      p.branchEniId,
      `${p.trunkEniId} (${p.trunkInterface})`,
      p.mode,
      p.hostVeth,
    ]);
  return `Branch pods\n${formatTable(rows)}`;
}

/** The "Recent failures" table: newest first, as the daemon lists them. */
export function renderFailures(failures: readonly FailureEntry[]): string {
  if (failures.length === 0) return 'Recent failures\n(none)';
  const rows = [['TIME', 'SOURCE', 'ACTION', 'CODE', 'POD', 'REASON']];
  for (const f of failures) rows.push([f.time, f.source, f.action, f.code, f.pod ?? '', f.reason]);
  return `Recent failures\n${formatTable(rows)}`;
}

/**
 * The tables `aws-node status` prints for a `/v1/enis` document, the warm-pool settings and the recent
 * failures.
 */
export function renderStatus(
  enis: EnisDocument,
  settings: Record<string, unknown>,
  failures: readonly FailureEntry[] = [],
  branchPods?: readonly BranchPodEntry[],
): string {
  const eniRows = [['CARD', 'ENI', 'PRIMARY', 'DEVICE', 'CIDRS', 'ASSIGNED', 'RANGES']];
  const podRows = [['POD', 'ADDRESS', 'ENI', 'CIDR', 'SINCE']];
  let total = 0;
  let assigned = 0;
  let prefixes = 0;
  for (const [card, doc] of Object.entries(enis).sort(([a], [b]) => Number(a) - Number(b))) {
    total += doc.TotalIPs;
    assigned += doc.AssignedIPs;
    const list = Object.values(doc.ENIs).sort((a, b) => a.DeviceNumber - b.DeviceNumber);
    for (const eni of list) {
      const cidrs = [...Object.entries(eni.AvailableIPv4Cidrs), ...Object.entries(eni.IPv6Cidrs ?? {})];
      prefixes += cidrs.filter(([, c]) => c.IsPrefix).length;
      let used = 0;
      let size = 0;
      for (const [cidr, c] of cidrs) {
        const bits = familyBits(ipFamily(cidr.split('/')[0] ?? '') ?? 4);
        size += 2 ** (bits - Number(cidr.split('/')[1] ?? bits));
        for (const a of Object.values(c.IPAddresses)) {
          // Released addresses stay listed with their history (the reference's document): not in use.
          if (a.UnassignedTime !== undefined && a.UnassignedTime !== GO_ZERO_TIME) continue;
          used++;
          const ns = a.IPAMMetadata?.k8sPodNamespace ?? '';
          const name = a.IPAMMetadata?.k8sPodName ?? '';
          podRows.push([
            ns || name ? `${ns}/${name}` : '(no pod name)',
            a.Address,
            eni.ID,
            cidr,
            a.AssignedTime ?? '',
          ]);
        }
      }
      eniRows.push([
        card,
        eni.ID,
        eni.IsPrimary ? 'yes' : 'no',
        String(eni.DeviceNumber),
        String(cidrs.length),
        `${used}/${size}`,
        cidrs.map(([c]) => c).join(' '),
      ]);
    }
  }
  const target = (name: string) => (settings[name] === undefined ? '' : `${name}=${String(settings[name])}`);
  const pool = formatTable([
    ['ADDRESSES', 'ASSIGNED', 'FREE', 'PREFIXES', 'TARGETS'],
    [
      String(total),
      String(assigned),
      String(total - assigned),
      String(prefixes),
      ['WARM_ENI_TARGET', 'WARM_IP_TARGET'].map(target).filter(Boolean).join(' '),
    ],
  ]);
  podRows.splice(
    1,
    podRows.length - 1,
    ...podRows.slice(1).sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? '')),
  );
  return [
    `ENIs\n${formatTable(eniRows)}`,
    `Pods\n${formatTable(podRows)}`,
    `Pool\n${pool}`,
    ...(branchPods !== undefined ? [renderBranchPods(branchPods)] : []),
    renderFailures(failures),
  ].join('\n\n');
}

/** How long `aws-node status` waits for all its documents, from connecting to the last byte of the last one. */
const STATUS_DEADLINE_MS = 3000;
/**
 * The most `aws-node status` reads of one introspection document. A full node's `/v1/enis` (15 ENIs of 50
 * addresses, or 15 prefixes of 16) is a few hundred KiB; an endpoint that sends more is not the daemon.
 */
const MAX_DOCUMENT_BYTES = 8 * 1024 * 1024;

/**
 * GETs `path` from the introspection endpoint `at`, as JSON, within `deadline` (shared by the command's requests:
 * it bounds the connection, the headers and the whole body, where `http.request`'s `timeout` is only an idle
 * timeout) and at most {@link MAX_DOCUMENT_BYTES}. Rejects with one line saying which bound was hit.
 */
function getJson(at: BindAddress, path: string, deadline: AbortSignal): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let failure: Error | undefined;
    const fail = (e: Error) =>
      reject(
        failure ?? (deadline.aborted ? new Error(`no complete answer within ${STATUS_DEADLINE_MS} ms`) : e),
      );
    const target =
      at.kind === 'unix' ? { socketPath: at.path } : { host: at.host ?? '127.0.0.1', port: at.port };
    const req = request({ ...target, path, agent: false, signal: deadline }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_DOCUMENT_BYTES) {
          failure = new Error(`${path} answered more than ${MAX_DOCUMENT_BYTES} bytes`);
          req.destroy(failure);
          return;
        }
        chunks.push(c);
      });
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${path} answered HTTP ${res.statusCode}`));
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          reject(new Error(`${path} did not answer JSON`));
        }
      });
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}

const USAGE = `Usage: aws-node status [--json] [--address host:port|unix:<path>] [--version]

What the running daemon holds, from its introspection endpoint: its ENIs, the pods' addresses, the pool, and
its most recent failures (pool actions, AddNetwork, reconcile) with their codes and reasons, newest first.
  --address      the introspection endpoint (default INTROSPECTION_BIND_ADDRESS, else 127.0.0.1:61679)
  --json         print {"enis": <v1/enis>, "settings": <v1/ipamd-env-settings>, "failures": <v1/failures>}
                 instead of tables
  -h, --help     print this help
  -v, --version  print the version (as \`aws-node --version\`)

Exit status: 0, 1 when the daemon cannot be reached (or answers nothing complete within 3 s), 2 on a bad
command line or address (port 0 included: it names no daemon).
`;

/** Runs `aws-node status` with `argv` (the arguments after `status`); resolves to the exit status. */
export async function runStatus(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  out: { stdout: (s: string) => void; stderr: (s: string) => void },
): Promise<number> {
  const read = readOptions(argv, {
    json: { type: 'boolean' },
    address: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'v' },
  });
  if ('problem' in read) {
    out.stderr(`aws-node status: ${read.problem}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  const values = read.values as { json?: boolean; address?: string; help?: boolean; version?: boolean };
  if (values.help) {
    out.stdout(USAGE);
    return 0;
  }
  if (values.version) {
    out.stdout(`aws-node ${programVersion(env)}\n`);
    return 0;
  }
  const address = values.address ?? (env['INTROSPECTION_BIND_ADDRESS'] || '127.0.0.1:61679');
  let enis: EnisDocument;
  let settings: Record<string, unknown>;
  let failures: unknown;
  let branchPods: unknown;
  const at = parseBindAddress(address);
  const problem =
    'problem' in at
      ? at.problem
      : at.kind === 'tcp' && at.port === 0
        ? 'port 0 is "any free port" to a server, not one to connect to'
        : undefined;
  if ('problem' in at || problem !== undefined) {
    const source = values.address !== undefined ? '--address' : 'INTROSPECTION_BIND_ADDRESS';
    out.stderr(
      `aws-node status: ${source} ${JSON.stringify(address)}: ${problem} (hint: name the daemon's introspection endpoint, host:port or unix:<path>)\n`,
    );
    return EXIT_USAGE;
  }
  // One deadline for all four requests; the first failure ends the others. (A plain timer: a signal from
  // `AbortSignal.timeout` inside `AbortSignal.any` can be collected before it fires on Node 20.)
  const done = new AbortController();
  const deadline = done.signal;
  const timer = setTimeout(() => done.abort(), STATUS_DEADLINE_MS);
  try {
    [enis, settings, failures, branchPods] = (await Promise.all([
      getJson(at, '/v1/enis', deadline),
      getJson(at, '/v1/ipamd-env-settings', deadline),
      getJson(at, '/v1/failures', deadline),
      getJson(at, '/v1/branch-pods', deadline),
    ])) as [EnisDocument, Record<string, unknown>, unknown, unknown];
  } catch (e) {
    out.stderr(
      `aws-node status: cannot read the daemon's introspection at ${address} (${e instanceof Error ? e.message : String(e)}): ` +
        'is aws-node running in this network namespace, with DISABLE_INTROSPECTION unset? --address names another endpoint\n',
    );
    return 1;
  } finally {
    clearTimeout(timer);
    done.abort();
  }
  // A daemon older than `/v1/failures` answers its list of commands there instead: no failures to show.
  if (!Array.isArray(failures)) failures = [];
  // Branch pods are shown only where security groups for pods is on (an older daemon answers its commands).
  const branches =
    settings?.['ENABLE_POD_ENI'] === true && Array.isArray(branchPods)
      ? (branchPods as BranchPodEntry[])
      : undefined;
  if (values.json) {
    out.stdout(
      `${JSON.stringify({ enis, settings, failures, ...(branches ? { branchPods: branches } : {}) })}\n`,
    );
    return 0;
  }
  let tables: string;
  try {
    tables = renderStatus(enis, settings ?? {}, failures as FailureEntry[], branches);
  } catch (e) {
    // Something else on that port, or a document of another shape: say so, not a stack trace.
    out.stderr(
      `aws-node status: ${address} answered JSON that is not aws-node's introspection (${e instanceof Error ? e.message : String(e)}); --json prints it as it is\n`,
    );
    return 1;
  }
  out.stdout(`${tables}\n`);
  return 0;
}
