/**
 * One kube-simulator and one scratch directory for a whole test file: started before its first test, closed and
 * removed after its last.
 */
import { type KubeSimulator, startKubeSimulator } from '@vpc-cni-kit/kube-simulator';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll } from 'vitest';

/** What {@link simulatorForFile} gives a test file; `sim` is there from the first test on. */
export interface SimulatorFile {
  readonly sim: KubeSimulator;
  readonly dir: { readonly path: string };
}

/** Registers the file's hooks; call at the top level of a test file. */
export function simulatorForFile(prefix: string): SimulatorFile {
  const dir = scratchDir(prefix);
  let sim: KubeSimulator | undefined;
  beforeAll(async () => {
    sim = await startKubeSimulator();
  });
  afterAll(async () => {
    await sim?.close();
    dir.remove();
  });
  return {
    get sim(): KubeSimulator {
      if (sim === undefined) throw new Error('the simulator starts before the first test');
      return sim;
    },
    dir,
  };
}
