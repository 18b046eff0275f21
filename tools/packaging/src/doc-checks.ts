/**
 * What a prose document claims that can be checked without running anything: the relative links it makes, the
 * anchors it points at, and the environment variables it names.
 */

/** A relative link of a Markdown document: `[text](href)` or a reference definition `[id]: href`. */
export interface DocLink {
  /** 1-based line. */
  line: number;
  /** The path part, URL-decoded (empty for a link within the same document). */
  path: string;
  /** The part after `#`, if any. */
  anchor?: string;
}

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((text, i) => {
    if (/^\s*```/.test(text)) fenced = !fenced;
    else if (!fenced) out.push({ line: i + 1, text });
  });
  return out;
}

const INLINE_LINK = /\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
const REFERENCE_LINK = /^\s*\[[^\]]+\]:\s*(\S+)/;

/** The relative links of `markdown` (not `http(s):`/`mailto:`), outside code blocks. */
export function markdownLinks(markdown: string): DocLink[] {
  const links: DocLink[] = [];
  for (const { line, text } of proseLines(markdown)) {
    const hrefs = [...text.matchAll(INLINE_LINK)].map((m) => m[1] ?? '');
    const ref = REFERENCE_LINK.exec(text)?.[1];
    if (ref !== undefined) hrefs.push(ref);
    for (const href of hrefs) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue;
      const hash = href.indexOf('#');
      const path = decodeURIComponent(hash < 0 ? href : href.slice(0, hash));
      links.push(hash < 0 ? { line, path } : { line, path, anchor: href.slice(hash + 1) });
    }
  }
  return links;
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces as hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors `markdown` defines: its headings' slugs (repeats numbered `-1`, `-2`, …) and `<a id|name>`s. */
export function markdownAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1];
    if (heading !== undefined) {
      const slug = headingSlug(heading);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      anchors.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1] ?? '');
  }
  return anchors;
}

/** An environment variable a document names in inline code, as `NAME` or `NAME=value`. */
export interface DocVariable {
  line: number;
  name: string;
}

const VARIABLE = /`([A-Z][A-Z0-9]*(?:_[A-Za-z0-9]+)+)(?:=[^`]*)?`/g;

/**
 * The upper-case, underscore-separated names in inline code outside code blocks (`WARM_IP_TARGET`,
 * `ENABLE_IPv6=true`): environment variables, and the error codes written the same way.
 */
export function documentedVariables(markdown: string): DocVariable[] {
  const out: DocVariable[] = [];
  for (const { line, text } of proseLines(markdown))
    for (const m of text.matchAll(VARIABLE)) out.push({ line, name: m[1] ?? '' });
  return out;
}

/** One entry of the decision-record list: `[ADR NNNN: title](adr/NNNN-slug.md)`. */
export interface AdrIndexEntry {
  line: number;
  number: string;
  title: string;
  file: string;
}

/** The entries under the `## Decision records` heading of `docs/index.md`. */
export function adrIndexEntries(indexMarkdown: string): AdrIndexEntry[] {
  const lines = indexMarkdown.split('\n');
  const start = lines.findIndex((l) => /^##\s+Decision records\s*$/.test(l));
  if (start < 0) return [];
  const entries: AdrIndexEntry[] = [];
  for (let i = start + 1; i < lines.length && !/^##\s/.test(lines[i] ?? ''); i++) {
    const m = /^-\s+\[ADR (\d{4}): (.*)\]\((adr\/[^)]+\.md)\)\s*$/.exec(lines[i] ?? '');
    if (m) entries.push({ line: i + 1, number: m[1] ?? '', title: m[2] ?? '', file: m[3] ?? '' });
  }
  return entries;
}

/** A command a document tells the reader to run: `node <script> …` or `npm run <name> …`. */
export interface DocCommand {
  line: number;
  /** `node` for a script, `npm` for a package.json script. */
  kind: 'node' | 'npm';
  /** The script's path as written, or the npm script's name. */
  target: string;
  /** The `--options` written with it (in its inline code span, or on its line and comment lines below it). */
  options: string[];
}

const NODE_COMMAND =
  /\bnode\s+((?:\.\.?\/)?(?:benchmarks|packages|examples|tools|scripts|deploy)\/[\w./-]+\.m?js)\b/;
const NPM_COMMAND = /\bnpm run ([\w:-]+)/;
const OPTION = /(?:^|[\s[|'"`(])(--[a-z][a-z0-9-]*)/g;

function commandIn(text: string, line: number): DocCommand | undefined {
  const node = NODE_COMMAND.exec(text);
  const npm = node === null ? NPM_COMMAND.exec(text) : null;
  const m = node ?? npm;
  if (m === null) return undefined;
  const after = text.slice(m.index + m[0].length);
  // `npm run x -- --flag`: the flags after `--` are the script's.
  const options = [...after.matchAll(OPTION)].map((o) => o[1] ?? '');
  return { line, kind: node !== null ? 'node' : 'npm', target: m[1] ?? '', options };
}

/**
 * The commands of `markdown`: in fenced code blocks one per line (a comment line right below adds options to it,
 * as `# --runs 40 [--bin-dir D]` does), in indented code one per line, in prose one per inline code span.
 */
export function documentedCommands(markdown: string): DocCommand[] {
  const out: DocCommand[] = [];
  let fenced = false;
  let last: DocCommand | undefined;
  markdown.split('\n').forEach((text, i) => {
    if (/^\s*```/.test(text)) {
      fenced = !fenced;
      last = undefined;
      return;
    }
    if (fenced) {
      const command = commandIn(text, i + 1);
      if (command !== undefined) out.push(command);
      else if (last !== undefined && /^\s+#/.test(text))
        last.options.push(...[...text.matchAll(OPTION)].map((o) => o[1] ?? ''));
      last = command ?? (/^\s+#/.test(text) ? last : undefined);
      return;
    }
    // An indented code block's command line.
    const indented = /^ {4,}(?:sudo )?(?:node|npm) /.test(text) ? commandIn(text, i + 1) : undefined;
    if (indented !== undefined) {
      out.push(indented);
      return;
    }
    for (const span of text.matchAll(/`([^`]+)`/g)) {
      const command = commandIn(span[1] ?? '', i + 1);
      if (command !== undefined) out.push(command);
    }
  });
  return out;
}
