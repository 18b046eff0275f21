import { writeFile } from 'node:fs/promises';
import { type OptionSpecs, readOptions } from '@vpc-cni-kit/command-line';
import { startKubeSimulator } from './simulator.js';

/** Usage text of `kube-sim`. */
export const USAGE = `usage: kube-sim serve --kubeconfig FILE [--host 127.0.0.1] [--port 0] [--tls | --plain-http]
                      [--webhook-service NS/NAME=HOST:PORT ...]

Serves a Kubernetes API server subset until SIGTERM/SIGINT and writes an admin kubeconfig to FILE.
  --kubeconfig FILE  where to write the kubeconfig (kubectl --kubeconfig FILE …)
  --host ADDR        listen address (default 127.0.0.1)
  --port N           listen port (default 0: any free port)
  --tls              serve https with a fresh self-signed certificate (the default; needs openssl)
  --plain-http       serve http instead (kubectl then sends no token: only for raw HTTP clients)
  --webhook-service NS/NAME=HOST:PORT
                     where an admission webhook's clientConfig.service NS/NAME (any port) is reached;
                     repeatable (TLS server name NAME.NS.svc; an unmapped Service is unreachable)
  --help             this text
  --version          the simulator's version`;

/** The options `kube-sim` reads. */
const OPTIONS: OptionSpecs = {
  kubeconfig: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  tls: { type: 'boolean' },
  'plain-http': { type: 'boolean' },
  'webhook-service': { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
};

/** Streams and hooks the CLI uses (injected so tests can run it in-process). */
export interface CliIo {
  /** Writes a line to stdout. */
  readonly out: (line: string) => void;
  /** Writes a line to stderr. */
  readonly err: (line: string) => void;
  /** Registers a handler for SIGTERM/SIGINT. */
  readonly onStop: (handler: () => void) => void;
  /** The package version (for `--version`). */
  readonly version: string;
}

/**
 * Runs `kube-sim`. `serve` prints one JSON line `{"url", "kubeconfig"}` once listening and resolves with the
 * exit code after a stop signal. Usage errors print one line and exit 2.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const read = readOptions(argv, OPTIONS, { allowPositionals: true });
  if ('problem' in read) {
    io.err(`kube-sim: ${read.problem} (see kube-sim --help)`);
    return 2;
  }
  const positionals = read.positionals;
  const values = read.values as {
    kubeconfig?: string;
    host?: string;
    port?: string;
    tls?: boolean;
    'plain-http'?: boolean;
    help?: boolean;
    version?: boolean;
    'webhook-service'?: string[];
  };
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  if (values.version) {
    io.out(io.version);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== 'serve') {
    io.err(
      `kube-sim: expected the command "serve"${positionals.length > 0 ? `, got "${positionals.join(' ')}"` : ''} (see kube-sim --help)`,
    );
    return 2;
  }
  if (!values.kubeconfig) {
    io.err('kube-sim: --kubeconfig FILE is required (see kube-sim --help)');
    return 2;
  }
  if (values.tls && values['plain-http']) {
    io.err('kube-sim: --tls and --plain-http exclude each other (see kube-sim --help)');
    return 2;
  }
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!/^\d+$/.test(values.port ?? '0') || port > 65535) {
    io.err(`kube-sim: --port ${values.port} is not a port number (0-65535)`);
    return 2;
  }
  const services = new Map<string, { host: string; port: number }>();
  for (const text of values['webhook-service'] ?? []) {
    const m = /^([a-z0-9.-]+)\/([a-z0-9.-]+)=(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text);
    if (m === null || Number(m[4]) > 65535) {
      io.err(`kube-sim: --webhook-service ${JSON.stringify(text)} is not NS/NAME=HOST:PORT`);
      return 2;
    }
    services.set(`${m[1]}/${m[2]}`, { host: m[3]!.replace(/^\[|\]$/g, ''), port: Number(m[4]) });
  }
  let sim: Awaited<ReturnType<typeof startKubeSimulator>> | undefined;
  try {
    sim = await startKubeSimulator({
      host: values.host ?? '127.0.0.1',
      port,
      tls: values['plain-http'] !== true,
      resolveWebhookService: (ref) => services.get(`${ref.namespace}/${ref.name}`),
    });
    await writeFile(values.kubeconfig, sim.kubeconfig(), { mode: 0o600 });
  } catch (e) {
    // A kubeconfig that cannot be written must not leave the server listening.
    await sim?.close();
    io.err(`kube-sim: could not start: ${(e as Error).message}`);
    return 1;
  }
  const stopped = new Promise<void>((resolve) => io.onStop(resolve));
  io.out(JSON.stringify({ url: sim.url, kubeconfig: values.kubeconfig }));
  await stopped;
  await sim.close();
  return 0;
}
