#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { runCli } from './cli-main.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

runCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  onStop: (handler) => {
    process.once('SIGTERM', handler);
    process.once('SIGINT', handler);
  },
  version: pkg.version,
}).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`kube-sim: internal error: ${String(e)}\n`);
    process.exit(1);
  },
);
