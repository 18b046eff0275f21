import { defineConfig } from 'vitest/config';

/**
 * Two projects:
 * - `unit`: pure tests that run anywhere (`*.test.ts`).
 * - `privileged`: real-kernel tests (`*.privileged.test.ts`). They need root and create their own network
 *   namespaces; when not root, each file skips with a stated reason (see `@vpc-cni-kit/testkit`).
 */
const resolve = { conditions: ['@vpc-cni-kit/source'] };
// scripts/test: the repository scripts' command lines (the benchmarks themselves run by hand, not here).
const roots = ['packages/*', 'examples/*', 'tools/*', 'scripts'];

export default defineConfig({
  resolve,
  ssr: { resolve: { conditions: ['@vpc-cni-kit/source'], externalConditions: ['@vpc-cni-kit/source'] } },
  test: {
    projects: [
      {
        resolve,
        ssr: {
          resolve: { conditions: ['@vpc-cni-kit/source'], externalConditions: ['@vpc-cni-kit/source'] },
        },
        test: {
          name: 'unit',
          include: roots.map((r) => `${r}/test/**/*.test.ts`),
          exclude: ['**/node_modules/**', '**/*.privileged.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        resolve,
        ssr: {
          resolve: { conditions: ['@vpc-cni-kit/source'], externalConditions: ['@vpc-cni-kit/source'] },
        },
        test: {
          name: 'privileged',
          include: roots.map((r) => `${r}/test/**/*.privileged.test.ts`),
          exclude: ['**/node_modules/**'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Kernel tests share one machine's rtnl lock and iptables lock: run files one at a time.
          fileParallelism: false,
        },
      },
    ],
  },
});
