/**
 * A plain-text table: the first row is the header, underlined; columns padded to their widest cell and
 * separated by two spaces. What `aws-node status` and the demo print.
 */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length))) ?? [];
  return rows
    .map((r, i) => {
      const line = r
        .map((cell, c) => cell.padEnd(widths[c] ?? 0))
        .join('  ')
        .trimEnd();
      return i === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n');
}
