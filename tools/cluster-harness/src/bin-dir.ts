import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The built `@vpc-cni-kit/aws-node` programs (`aws-node.cjs`, `aws-vpc-cni-init.cjs`, `aws-cni.cjs`): the
 * installed package's `dist/bin`, what `ClusterOptions.binDir` takes.
 */
export function awsNodeBinDir(): string {
  return join(dirname(awsNodePackageJson()), 'dist/bin');
}

/** The version of the `@vpc-cni-kit/aws-node` the harness runs. */
export function awsNodeVersion(): string {
  return (JSON.parse(readFileSync(awsNodePackageJson(), 'utf8')) as { version: string }).version;
}

function awsNodePackageJson(): string {
  return createRequire(import.meta.url).resolve('@vpc-cni-kit/aws-node/package.json');
}
