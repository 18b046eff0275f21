import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The built `@vpc-cni-kit/aws-node` programs (`aws-node.cjs`, `aws-vpc-cni-init.cjs`, `aws-cni.cjs`): the
 * installed package's `dist/bin`, what `ClusterOptions.binDir` takes.
 */
export function awsNodeBinDir(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@vpc-cni-kit/aws-node/package.json')), 'dist/bin');
}
