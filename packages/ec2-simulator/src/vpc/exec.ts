import { spawnSync } from 'node:child_process';
import { withNetnsSync } from '@vpc-cni-kit/netlink';
import { VpcError } from './errors.js';

/**
 * Runs one nft script inside a namespace as a single transaction (`nft -f -`): all of it applies or none.
 * The child is forked while this thread is switched into the namespace (synchronously), so it starts there
 * without nsenter. Throws `VPC_DATAPLANE` with nft's message on failure.
 */
export function nftApply(op: string, netnsPath: string, commands: readonly string[]): void {
  if (commands.length === 0) return;
  const script = `${commands.join('\n')}\n`;
  const r = withNetnsSync(netnsPath, () =>
    spawnSync('nft', ['-f', '-'], { input: script, encoding: 'utf8', timeout: 10_000 }),
  );
  if (r.error || r.status !== 0) {
    const detail = r.error ? String(r.error) : r.stderr.trim();
    throw new VpcError('VPC_DATAPLANE', op, `nft failed: ${detail}`);
  }
}

/** Reads named counters of an nft table (family `ip` unless told) inside a namespace: name → packets. */
export function nftCounters(
  op: string,
  netnsPath: string,
  table: string,
  family: 'ip' | 'ip6' = 'ip',
): Map<string, number> {
  const r = withNetnsSync(netnsPath, () =>
    spawnSync('nft', ['-j', 'list', 'counters', 'table', family, table], {
      encoding: 'utf8',
      timeout: 10_000,
    }),
  );
  if (r.error || r.status !== 0) {
    const detail = r.error ? String(r.error) : r.stderr.trim();
    throw new VpcError('VPC_DATAPLANE', op, `nft failed: ${detail}`);
  }
  const out = new Map<string, number>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(r.stdout);
  } catch {
    throw new VpcError('VPC_DATAPLANE', op, 'nft printed invalid JSON');
  }
  const items = (parsed as { nftables?: unknown }).nftables;
  if (!Array.isArray(items)) return out;
  for (const item of items) {
    const c = (item as { counter?: { name?: unknown; packets?: unknown } }).counter;
    if (c && typeof c.name === 'string' && typeof c.packets === 'number') out.set(c.name, c.packets);
  }
  return out;
}
