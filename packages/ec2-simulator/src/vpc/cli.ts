#!/usr/bin/env node
import { runVpcCli } from './cli-main.js';

runVpcCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  onStop: (handler) => {
    process.once('SIGTERM', handler);
    process.once('SIGINT', handler);
  },
}).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${JSON.stringify({ error: 'INTERNAL', message: String(e) })}\n`);
    process.exit(1);
  },
);
