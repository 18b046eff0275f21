/**
 * The command lines of `aws-node` and `aws-vpc-cni-init`: read strictly (`@vpc-cni-kit/command-line`), so an
 * unknown option or a stray argument is refused (usage on stderr, exit 2) before anything touches the node. Both
 * programs take their configuration from the environment, as the reference's do; the command line only asks for
 * help or the version.
 */
import { type CommandLineAsk, readOptions } from '@vpc-cni-kit/command-line';

/**
 * Reads `argv` (without the node and script paths): `--help`/`-h`, `--version`/`-v`, or nothing. Anything else
 * is `invalid`.
 */
export function readCommandLine(argv: readonly string[]): CommandLineAsk {
  const read = readOptions(argv, {
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'v' },
  });
  if ('problem' in read) return { kind: 'invalid', problem: read.problem };
  if (read.values['help']) return { kind: 'help' };
  if (read.values['version']) return { kind: 'version' };
  return { kind: 'run' };
}
