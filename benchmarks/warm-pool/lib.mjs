// Shared helpers for the warm-pool simulator and trace generator: a seeded PRNG and the trace CSV codec.

/** mulberry32: a small, fast, seeded PRNG returning floats in [0, 1). Deterministic per seed. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Exponentially distributed sample with the given mean. */
export function exponential(rand, mean) {
  return -Math.log(1 - rand()) * mean;
}

/**
 * Trace CSV format (one node):
 *
 *   # comment lines start with '#'
 *   time_s,event,pod
 *   0.000,add,web-1
 *   42.500,del,web-1
 *
 * - time_s: seconds from the start of the trace (non-decreasing is not required; events are sorted).
 * - event: `add` (pod sandbox created: the CNI asks for an address) or `del` (pod deleted).
 * - pod: any unique pod name without commas. A `del` for a pod never added is an error; a pod
 *   still running at the end of the trace simply stays.
 */
export function parseTrace(text, name = 'trace') {
  const events = [];
  let header = false;
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    if (!header) {
      if (line !== 'time_s,event,pod')
        throw new Error(`${name}:${i + 1}: expected header "time_s,event,pod"`);
      header = true;
      return;
    }
    const [t, event, pod, ...rest] = line.split(',');
    const time = Number(t);
    if (
      rest.length > 0 ||
      !Number.isFinite(time) ||
      time < 0 ||
      (event !== 'add' && event !== 'del') ||
      !pod
    ) {
      throw new Error(`${name}:${i + 1}: bad row "${line}"`);
    }
    events.push({ time, event, pod, line: i + 1 });
  });
  if (!header) throw new Error(`${name}: missing header "time_s,event,pod"`);
  events.sort((a, b) => a.time - b.time || a.line - b.line);
  const live = new Set();
  for (const e of events) {
    if (e.event === 'add') {
      if (live.has(e.pod)) throw new Error(`${name}:${e.line}: pod ${e.pod} added twice`);
      live.add(e.pod);
    } else {
      if (!live.has(e.pod)) throw new Error(`${name}:${e.line}: del of pod ${e.pod} that is not running`);
      live.delete(e.pod);
    }
  }
  return events;
}

/** Serializes events to the trace CSV format. */
export function formatTrace(events, comment) {
  const rows = [...events].sort((a, b) => a.time - b.time);
  return `${comment
    .split('\n')
    .map((l) => `# ${l}`)
    .join(
      '\n',
    )}\ntime_s,event,pod\n${rows.map((e) => `${e.time.toFixed(3)},${e.event},${e.pod}`).join('\n')}\n`;
}

/** A binary-heap event queue on a virtual clock: pops by time, ties in insertion order. */
export class Queue {
  items = [];
  seq = 0;
  push(at, kind, data) {
    const item = { at, seq: this.seq++, kind, data };
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p].at < item.at || (a[p].at === item.at && a[p].seq < item.seq)) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = item;
  }
  pop() {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0) {
      const less = (x, y) => x.at < y.at || (x.at === y.at && x.seq < y.seq);
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && less(a[l], m === i ? last : a[m])) m = l;
        if (r < a.length && less(a[r], m === i ? last : a[m])) m = r;
        if (m === i) break;
        a[i] = a[m];
        i = m;
      }
      a[i] = last;
    }
    return top;
  }
  get size() {
    return this.items.length;
  }
}

/** Rows (the first is the header) as a Markdown table, or as aligned plain text. */
export function formatTable(rows, markdown) {
  if (markdown) {
    return [
      `| ${rows[0].join(' | ')} |`,
      `|${rows[0].map(() => '---').join('|')}|`,
      ...rows.slice(1).map((r) => `| ${r.join(' | ')} |`),
    ].join('\n');
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  const line = (r) => r.map((c, i) => String(c).padEnd(widths[i])).join('  ');
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}
