#!/usr/bin/env node
import { packageVersion } from '../cli-args.js';
import { runVpcCli } from './cli-main.js';

runVpcCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  onStop: (handler) => {
    process.once('SIGTERM', handler);
    process.once('SIGINT', handler);
  },
  // dist/cli.js and dist/vpc-cli.js sit one directory below package.json.
  version: packageVersion(import.meta.url),
}).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${JSON.stringify({ error: 'INTERNAL', message: String(e) })}\n`);
    process.exit(1);
  },
);
