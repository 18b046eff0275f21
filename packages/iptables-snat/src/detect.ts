import { SnatError } from './errors.js';
import type { ConnmarkBackend } from './options.js';
import type { CommandRunner } from './runner.js';

/** What {@link detectBackend} found. */
export interface BackendInfo {
  /** `iptables` when `iptables --version` mentions `legacy`, else `nftables` (the reference's rule). */
  readonly connmarkBackend: ConnmarkBackend;
  /** Whether this iptables supports `--random-fully` (version ≥ 1.6.2). */
  readonly randomFullySupported: boolean;
  /** The version text iptables printed, trimmed. */
  readonly versionText: string;
}

/** Interprets `iptables --version` output (pure; used by {@link detectBackend}). */
export function interpretIptablesVersion(text: string): BackendInfo {
  const versionText = text.trim();
  const m = /v(\d+)\.(\d+)\.(\d+)/.exec(versionText);
  let randomFullySupported = false;
  if (m) {
    const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
    randomFullySupported = major > 1 || (major === 1 && (minor > 6 || (minor === 6 && patch >= 2)));
  }
  return {
    connmarkBackend: versionText.includes('legacy') ? 'iptables' : 'nftables',
    randomFullySupported,
    versionText,
  };
}

/**
 * Runs `iptables --version` and decides the connmark backend and `--random-fully` support as the reference
 * does. Throws `COMMAND_FAILED` when iptables cannot be run.
 */
export async function detectBackend(runner: CommandRunner, iptables = 'iptables'): Promise<BackendInfo> {
  const result = await runner.run({ file: iptables, args: ['--version'] });
  if (result.exitCode !== 0) {
    throw new SnatError({
      code: 'COMMAND_FAILED',
      subject: iptables,
      exitCode: result.exitCode,
      stderr: result.stderr,
    });
  }
  return interpretIptablesVersion(result.stdout);
}
