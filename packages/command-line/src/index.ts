/**
 * The command line of every vpc-cni-kit program: `node:util`'s `parseArgs` in strict mode, a negative number
 * taken as the value of the string option before it, refusals as one line, and the answer to `--help`,
 * `--version` and a refused line. aws-node's programs, the resource controller and kube-sim read and answer their
 * command lines with it.
 *
 * @packageDocumentation
 */

export {
  type AnswerOutput,
  type AnswerText,
  answerCommandLine,
  type CommandLineAsk,
  EXIT_USAGE,
} from './answer.js';
export { type OptionSpecs, type ReadOptions, type RefusedOptions, readOptions } from './read-options.js';
