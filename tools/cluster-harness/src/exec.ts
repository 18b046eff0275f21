import { execFile } from 'node:child_process';

/** The outcome of a command. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command inside a network namespace (`nsenter --net=PATH`, which, unlike `ip netns exec`, does not
 * remount /sys). Never blocks the event loop: the simulator serving EC2 and IMDS lives in this process.
 */
export function inNetns(
  netnsPath: string,
  argv: readonly string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      'nsenter',
      [`--net=${netnsPath}`, ...argv],
      {
        encoding: 'utf8',
        timeout: options.timeoutMs ?? 60_000,
        env: options.env ?? process.env,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
