/**
 * What `aws-vpc-cni-init` will do, decided and checked before it does any of it: its settings, and the sysctls it
 * will write (each must exist and be writable). A failed init then leaves the node as it was: nothing installed,
 * nothing set.
 */
import { accessSync, constants } from 'node:fs';
import { isAbsolute } from 'node:path';
import { ConfigError, EnvReader } from '../config/env-reader.js';

/** The init step's settings. */
export interface InitConfig {
  /** `HOST_CNI_BIN_PATH` (absolute; default `/host/opt/cni/bin`): where the plugins are installed. */
  readonly binDir: string;
  /** `AWS_NODE_CORE_PLUGINS_DIR` (absolute), where the core plugins are taken from first; `undefined` when unset. */
  readonly corePluginsDir: string | undefined;
  /** `ENABLE_IPv6`. */
  readonly ipv6: boolean;
  /** `ENABLE_V6_EGRESS`. */
  readonly v6Egress: boolean;
  /** `DISABLE_TCP_EARLY_DEMUX`. */
  readonly noEarlyDemux: boolean;
}

/**
 * Reads the init step's settings from `env`.
 *
 * @throws ConfigError naming every invalid variable
 */
export function readInitConfig(env: Readonly<Record<string, string | undefined>>): InitConfig {
  const r = new EnvReader(env);
  const binDir = r.string('HOST_CNI_BIN_PATH', '/host/opt/cni/bin');
  if (!isAbsolute(binDir)) r.problem('HOST_CNI_BIN_PATH', 'must be an absolute path');
  const corePluginsDir = r.raw('AWS_NODE_CORE_PLUGINS_DIR');
  if (corePluginsDir !== undefined && !isAbsolute(corePluginsDir))
    r.problem('AWS_NODE_CORE_PLUGINS_DIR', 'must be an absolute path');
  const config = {
    binDir,
    corePluginsDir,
    ipv6: r.bool('ENABLE_IPv6', false),
    v6Egress: r.bool('ENABLE_V6_EGRESS', false),
    noEarlyDemux: r.bool('DISABLE_TCP_EARLY_DEMUX', false),
  };
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

/** One sysctl the init step writes. */
export interface SysctlWrite {
  /** Slash form under /proc/sys (`net/ipv4/conf/eth0/rp_filter`). */
  readonly key: string;
  readonly value: string;
  /** Skipped when the kernel does not have it (the reference skips `tcp_early_demux` too). */
  readonly optional?: true;
  /** The setting that asks for it, for the operator's hint. */
  readonly because: string;
}

/**
 * The sysctls for the node whose primary interface is `primary`, in the order they are written: `rp_filter=2` on
 * it, `ip_forward=1`, `tcp_early_demux`, and the reference's `configureIPv6Settings` (IPv6 on with `ENABLE_IPv6`;
 * forwarding and `accept_ra=2` on the primary interface with `ENABLE_IPv6` or `ENABLE_V6_EGRESS`).
 */
export function initSysctls(primary: string, config: InitConfig): SysctlWrite[] {
  const writes: SysctlWrite[] = [
    { key: `net/ipv4/conf/${primary}/rp_filter`, value: '2', because: 'every node' },
    // Pods are routed through the node: forwarding must be on. The reference leaves this to the node image
    // (the EKS AMI enables it); a node without it cannot carry pod traffic, so set it here.
    { key: 'net/ipv4/ip_forward', value: '1', because: 'every node' },
    {
      key: 'net/ipv4/tcp_early_demux',
      value: config.noEarlyDemux ? '0' : '1',
      optional: true,
      because: 'DISABLE_TCP_EARLY_DEMUX',
    },
  ];
  if (config.ipv6)
    writes.push({ key: 'net/ipv6/conf/all/disable_ipv6', value: '0', because: 'ENABLE_IPv6=true' });
  if (config.ipv6 || config.v6Egress) {
    const because = config.ipv6 ? 'ENABLE_IPv6=true' : 'ENABLE_V6_EGRESS=true';
    writes.push(
      { key: 'net/ipv6/conf/all/forwarding', value: '1', because },
      { key: `net/ipv6/conf/${primary}/accept_ra`, value: '2', because },
    );
  }
  return writes;
}

/** A precondition of the init step does not hold; nothing was installed or set. */
export class InitPreconditionError extends Error {
  /** Discriminator. */
  readonly kind = 'InitPreconditionError' as const;
  /** `SysctlUnavailable`: a sysctl the init step must write is missing or not writable. */
  readonly code = 'SysctlUnavailable' as const;

  /**
   * @param write - the sysctl
   * @param errno - why it cannot be written (`ENOENT`: this kernel does not have it; `EROFS`, `EACCES`)
   */
  constructor(
    readonly write: SysctlWrite,
    readonly errno: string,
  ) {
    super(
      `cannot set ${write.key.replaceAll('/', '.')}=${write.value} (${errno}${errno === 'ENOENT' ? ': this kernel does not have it' : ''}), which ${write.because} needs: ${
        errno !== 'ENOENT'
          ? 'run aws-vpc-cni-init privileged, with /proc/sys writable'
          : write.key.startsWith('net/ipv6/')
            ? `unset ${write.because.replace('=true', '')} on a node without IPv6, or boot it with IPv6`
            : "run it in the node's network namespace (hostNetwork)"
      }; nothing was installed or set`,
    );
    this.name = 'InitPreconditionError';
  }
}

/**
 * Checks that every sysctl of `writes` but the optional ones exists and is writable (under `root`, /proc/sys on a
 * node), and returns the writes to make (optional ones the kernel lacks left out).
 *
 * @throws InitPreconditionError for the first that is not
 */
export function checkSysctls(writes: readonly SysctlWrite[], root = '/proc/sys'): SysctlWrite[] {
  const out: SysctlWrite[] = [];
  for (const w of writes) {
    try {
      accessSync(`${root}/${w.key}`, constants.W_OK);
      out.push(w);
    } catch (e) {
      const errno = (e as NodeJS.ErrnoException).code ?? String(e);
      if (w.optional && errno === 'ENOENT') continue;
      throw new InitPreconditionError(w, errno);
    }
  }
  return out;
}
