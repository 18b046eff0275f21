import { spawn } from 'node:child_process';

/** A command to run: program, arguments and optional standard input. */
export interface Command {
  /** Program name or path (e.g. `iptables-restore`). */
  readonly file: string;
  /** Arguments, never passed through a shell. */
  readonly args: readonly string[];
  /** Text written to the program's standard input. */
  readonly stdin?: string | undefined;
}

/** How a command ended. `exitCode` is `-1` when it could not be started (e.g. the program is missing). */
export interface CommandResult {
  /** Process exit code, or -1 when it could not be started. */
  readonly exitCode: number;
  /** Standard output. */
  readonly stdout: string;
  /** Standard error (or the spawn error's text when it could not be started). */
  readonly stderr: string;
}

/**
 * The port through which this package runs `iptables-save`, `iptables-restore`, `nft` and `iptables`.
 * {@link processRunner} is the real one; a runner is how the rules are applied in a particular network
 * namespace.
 */
export interface CommandRunner {
  /** Runs a command to completion. Never throws for a non-zero exit; reports it in the result. */
  run(command: Command): Promise<CommandResult>;
}

/** Options of {@link processRunner}. */
export interface ProcessRunnerOptions {
  /**
   * Run every command inside this network namespace: a path such as `/var/run/netns/<name>` or
   * `/proc/<pid>/ns/net`, entered with `nsenter --net=<path>` (which, unlike `ip netns exec`, does not
   * remount /sys). Absent: the caller's own namespace.
   */
  readonly netnsPath?: string | undefined;
  /** The `nsenter` program. @defaultValue `'nsenter'` */
  readonly nsenter?: string | undefined;
}

/** A {@link CommandRunner} that spawns real processes (no shell), optionally inside a network namespace. */
export function processRunner(options: ProcessRunnerOptions = {}): CommandRunner {
  return {
    run(command) {
      const [file, args] =
        options.netnsPath === undefined
          ? [command.file, [...command.args]]
          : [
              options.nsenter ?? 'nsenter',
              [`--net=${options.netnsPath}`, '--', command.file, ...command.args],
            ];
      return new Promise((resolve) => {
        const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] });
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        let settled = false;
        const finish = (result: CommandResult) => {
          if (!settled) {
            settled = true;
            resolve(result);
          }
        };
        child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
        child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
        child.on('error', (error) => finish({ exitCode: -1, stdout: '', stderr: String(error.message) }));
        child.on('close', (code) =>
          finish({
            exitCode: code ?? -1,
            stdout: Buffer.concat(out).toString('utf8'),
            stderr: Buffer.concat(err).toString('utf8'),
          }),
        );
        child.stdin.on('error', () => {});
        child.stdin.end(command.stdin ?? '');
      });
    },
  };
}
