/**
 * `grpc-health-probe`: the DaemonSet's liveness and readiness probe, with grpc-health-probe's flags and exit
 * codes (src/probe/health-probe.ts), e.g. `grpc-health-probe -addr=unix:///var/run/aws-node/ipamd.sock
 * -connect-timeout=5s -rpc-timeout=5s`.
 */
import { runHealthProbe } from '../probe/health-probe.js';
import { VERSION } from '../version.js';

runHealthProbe(process.argv.slice(2), {
  stderr: (s) => process.stderr.write(s),
  now: () => performance.now(),
  version: VERSION,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 3;
  },
);
