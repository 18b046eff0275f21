import { runProgram } from '../cli/main.js';

void runProgram({
  argv: process.argv.slice(2),
  env: process.env,
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  onSignal: (handler) => {
    process.once('SIGTERM', () => handler('SIGTERM'));
    process.once('SIGINT', () => handler('SIGINT'));
  },
}).then(
  (code) => {
    process.exitCode = code;
    // Informers and kept-alive sockets may linger after a stop: the status is decided, leave.
    setTimeout(() => process.exit(code), 100).unref();
  },
  (e: unknown) => {
    process.stderr.write(`vpc-resource-controller: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
