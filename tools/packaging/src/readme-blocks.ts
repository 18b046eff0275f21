/** How a README code block is checked. */
export type DocBlockMode =
  /** Typechecked and run as a user would run it. */
  | 'run'
  /**
   * Typechecked and run as root in a throwaway sandbox: a private mount namespace whose `/run` is an empty
   * tmpfs (with `netns/` and `aws-node/`) and a private network namespace (loopback up), so an example that
   * creates namespaces or writes `/var/run/...` changes nothing on the machine.
   */
  | 'sandbox'
  /** Typechecked, not run (a plugin program, say, that only a runtime runs). The directive gives the reason. */
  | 'typecheck'
  /** Neither: a fragment that continues an earlier example. The directive must give the reason. */
  | 'skip';

/** A `ts`/`js` code block of a README, with what its directive says. */
export interface DocBlock {
  /** 1-based line of the opening fence. */
  line: number;
  lang: 'ts' | 'js';
  code: string;
  mode: DocBlockMode;
  /** The reason given with `typecheck` or `skip`. */
  reason?: string;
  /** With `sandbox`: shell commands run in the sandbox first (what the README tells the reader to do first). */
  setup?: string;
  /**
   * What the README says the example prints: the plain block after an `It prints:` line that follows the
   * example. `…` stands for any text within a line.
   */
  prints?: string;
}

const FENCE = /^```(\w*)\s*$/;
const DIRECTIVE = /^<!--\s*doctest:\s*(run|sandbox|typecheck|skip)\b(?:\s*[:—-]\s*(.*?))?\s*-->\s*$/;

/**
 * The `ts` and `js` fenced blocks of a README. A block runs unless the line before it (blank lines aside) is a
 * directive `<!-- doctest: sandbox -->` (or `<!-- doctest: sandbox: <setup commands> -->`),
 * `<!-- doctest: typecheck: <reason> -->` or
 * `<!-- doctest: skip: <reason> -->`. Throws on `typecheck` or `skip` without a reason and on an unterminated
 * fence.
 */
export function readmeBlocks(markdown: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? '');
    if (open === null) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`line ${i + 1}: unterminated code block`);
    const lang = open[1];
    if (lang === 'ts' || lang === 'js') {
      let k = i - 1;
      while (k >= 0 && (lines[k] ?? '').trim() === '') k--;
      const directive = DIRECTIVE.exec(lines[k] ?? '');
      const mode = (directive?.[1] ?? 'run') as DocBlockMode;
      const text = directive?.[2];
      const reason = mode === 'sandbox' ? undefined : text;
      if ((mode === 'skip' || mode === 'typecheck') && !reason)
        throw new Error(`line ${i + 1}: "doctest: ${mode}" needs a reason`);
      blocks.push({
        line: i + 1,
        lang,
        code: lines.slice(i + 1, end).join('\n'),
        mode,
        ...(reason ? { reason } : {}),
        ...(mode === 'sandbox' && text ? { setup: text } : {}),
        ...printedAfter(lines, end),
      });
    }
    i = end;
  }
  return blocks;
}

/** The `It prints:` block after the fence closing at `end`, if there is one. */
function printedAfter(lines: readonly string[], end: number): { prints?: string } {
  let k = end + 1;
  while (k < lines.length && (lines[k] ?? '').trim() === '') k++;
  if (!/^It prints:\s*$/.test(lines[k] ?? '')) return {};
  k++;
  while (k < lines.length && (lines[k] ?? '').trim() === '') k++;
  if (!/^```\s*$/.test(lines[k] ?? '')) return {};
  const close = lines.findIndex((l, j) => j > k && /^```\s*$/.test(l));
  if (close < 0) return {};
  return { prints: lines.slice(k + 1, close).join('\n') };
}
