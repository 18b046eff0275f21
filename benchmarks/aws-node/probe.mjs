// The health probe's latency as a kubelet sees it (a whole process per probe): the bundled
// grpc-health-probe against the daemon's gRPC server (grpc-js, the daemon's own) on a unix socket, against
// the Node process floor (`node -e 0`) and a probe written with @grpc/grpc-js (what a Node probe would cost
// with the gRPC library), interleaved round-robin.
// Build first: TURBO_TELEMETRY_DISABLED=1 npx turbo run build --filter=@vpc-cni-kit/aws-node
//   node benchmarks/aws-node/probe.mjs            # --runs N (default 40)

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { table, timeProcesses } from '../lib/timing.mjs';
import { binDir } from './lib.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    "The health probe's latency as a kubelet sees it: the bundled grpc-health-probe against the daemon's gRPC\n" +
    'server, against `node -e 0` and a probe written with @grpc/grpc-js, interleaved. Build @vpc-cni-kit/aws-node first.',
  options: { runs: { type: 'count', default: 40, min: 1, description: 'timed probes per variant' } },
});
const RUNS = args.runs;
const dir = mkdtempSync(join(tmpdir(), 'vck-probe-bench-'));
const socketPath = join(dir, 'ipamd.sock');
// The server runs in a process of its own: the timing loop below blocks this one.
const server = spawn(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    `import { startRpcServer } from ${JSON.stringify(join(binDir, '../index.js'))};
     const no = () => Promise.reject(new Error('unused'));
     await startRpcServer({ socketPath: ${JSON.stringify(socketPath)}, backend: { addNetwork: no, delNetwork: no } });
     process.stdout.write('ready\\n');`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
await new Promise((resolve, reject) => {
  server.stdout.once('data', resolve);
  server.once('exit', (code) => reject(new Error(`server exited ${code}`)));
});
const grpcJs = createRequire(join(binDir, 'aws-node.cjs')).resolve('@grpc/grpc-js');
const GRPC_JS_PROBE = `
const grpc = require(${JSON.stringify(grpcJs)});
const c = new grpc.Client('unix://${socketPath}', grpc.credentials.createInsecure());
const id = (b) => b;
c.makeUnaryRequest('/grpc.health.v1.Health/Check', id, id, Buffer.alloc(0), { deadline: Date.now() + 5000 },
  (e, r) => { process.exitCode = e || r[1] !== 1 ? 3 : 0; c.close(); });
`;
try {
  const results = timeProcesses(
    [
      { name: 'node -e 0 (floor)', cmd: process.execPath, args: ['-e', '0'] },
      {
        name: 'grpc-health-probe (this package)',
        cmd: process.execPath,
        args: [
          join(binDir, 'grpc-health-probe.cjs'),
          `-addr=unix://${socketPath}`,
          '-connect-timeout=5s',
          '-rpc-timeout=5s',
        ],
      },
      { name: 'probe with @grpc/grpc-js', cmd: process.execPath, args: ['-e', GRPC_JS_PROBE] },
    ],
    { runs: RUNS, warmup: 3 },
  );
  console.log(`health probe, one process per probe, ${RUNS} runs each, interleaved (${process.version})\n`);
  console.log(table(results, 'node -e 0 (floor)'));
} finally {
  server.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
