import { execFileSync } from 'node:child_process';

/**
 * Test-only network namespace helpers over iproute2, for suites below the netlink package (cni-spec) that
 * need a namespace to run third-party plugins in. Everything else uses @vpc-cni-kit/netlink.
 */
export const ipCli = {
  /** `ip netns add NAME`; returns /run/netns/NAME. */
  addNetns(name: string): string {
    execFileSync('ip', ['netns', 'add', name]);
    return `/run/netns/${name}`;
  },
  /** `ip netns del NAME`, ignoring a namespace that is already gone. */
  delNetns(name: string): void {
    try {
      execFileSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  },
  /** Runs `ip -n NS ...args` and returns stdout. */
  inNetns(name: string, args: string[]): string {
    return execFileSync('ip', ['-n', name, ...args], { encoding: 'utf8' });
  },
  /** Names of the namespaces under /run/netns. */
  listNetns(): string[] {
    return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
      .split('\n')
      .map((l) => l.split(' ')[0] ?? '')
      .filter((n) => n !== '');
  },
};
