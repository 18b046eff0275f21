// Small SVG writers for the simulator's charts: addresses over time (stacked areas) and the Pareto plot.

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const COLORS = { assigned: '#2b6cb0', warm: '#38a169', cooling: '#d69e2e', waiting: '#e53e3e' };

function axis(x0, y0, w, h, xMax, yMax, xLabel, yLabel) {
  const parts = [
    `<line x1="${x0}" y1="${y0 + h}" x2="${x0 + w}" y2="${y0 + h}" stroke="#333"/>`,
    `<line x1="${x0}" y1="${y0}" x2="${x0}" y2="${y0 + h}" stroke="#333"/>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const yv = (yMax * i) / 4;
    const y = y0 + h - (h * i) / 4;
    if (yMax > 0) {
      parts.push(
        `<text x="${x0 - 4}" y="${y + 3}" font-size="9" text-anchor="end">${Number.isInteger(yv) ? yv : yv.toFixed(1)}</text>`,
      );
      parts.push(`<line x1="${x0}" y1="${y}" x2="${x0 + w}" y2="${y}" stroke="#ddd"/>`);
    }
    const xv = (xMax * i) / 4;
    parts.push(
      `<text x="${x0 + (w * i) / 4}" y="${y0 + h + 12}" font-size="9" text-anchor="middle">${Number.isInteger(xv) ? xv : xv.toFixed(1)}</text>`,
    );
  }
  parts.push(
    `<text x="${x0 + w / 2}" y="${y0 + h + 25}" font-size="10" text-anchor="middle">${esc(xLabel)}</text>`,
  );
  parts.push(
    `<text x="${x0 - 28}" y="${y0 + h / 2}" font-size="10" text-anchor="middle" transform="rotate(-90 ${x0 - 28} ${y0 + h / 2})">${esc(yLabel)}</text>`,
  );
  return parts.join('');
}

/** Resamples a step timeline to `n` columns: the state at each column's end, waiting pods at their column max. */
function resample(timeline, durationS, n = 240) {
  const out = [];
  let j = 0;
  let cur = timeline[0] ?? [0, 0, 0, 0, 0];
  for (let i = 0; i < n; i++) {
    const t1 = (durationS * (i + 1)) / n;
    let waitMax = cur[4];
    while (j < timeline.length && timeline[j][0] <= t1) {
      cur = timeline[j];
      waitMax = Math.max(waitMax, cur[4]);
      j += 1;
    }
    out.push([(durationS * i) / n, cur[1], cur[2], cur[3], waitMax]);
  }
  return out;
}

/**
 * Addresses over time, one panel per policy: stacked step areas of assigned, usable warm and cooling addresses,
 * and pods waiting as a red line. `panels`: [{ title, timeline: [[t_s, assigned, warm, cooling, waiting], …] }].
 */
export function timelineSvg(title, panels, durationS) {
  const W = 760;
  const PH = 150;
  const x0 = 50;
  const w = W - x0 - 20;
  const yMax = Math.max(
    4,
    ...panels.flatMap((p) => p.timeline.map((r) => Math.max(r[1] + r[2] + r[3], r[4]))),
  );
  const yTop = Math.ceil(yMax / 4) * 4;
  const H = 40 + panels.length * (PH + 45) + 20;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">`,
    `<title>${esc(title)}</title>`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${W / 2}" y="18" font-size="13" text-anchor="middle" font-weight="bold">${esc(title)}</text>`,
  ];
  const legend = [
    ['assigned', 'assigned'],
    ['warm', 'warm (usable free)'],
    ['cooling', 'cooling'],
    ['waiting', 'pods waiting'],
  ];
  legend.forEach(([k, label], i) => {
    out.push(`<rect x="${x0 + i * 150}" y="26" width="10" height="10" fill="${COLORS[k]}"/>`);
    out.push(`<text x="${x0 + 14 + i * 150}" y="35" font-size="10">${esc(label)}</text>`);
  });
  panels.forEach((p, pi) => {
    const y0 = 50 + pi * (PH + 45);
    const sx = (t) => x0 + (w * Math.min(t, durationS)) / durationS;
    const sy = (v) => y0 + PH - (PH * v) / yTop;
    out.push(`<text x="${x0}" y="${y0 - 3}" font-size="11" font-weight="bold">${esc(p.title)}</text>`);
    out.push(axis(x0, y0, w, PH, Math.round(durationS / 60), yTop, 'minutes', 'addresses'));
    // Stacked areas as step functions: bottom = 0, then assigned, + warm, + cooling.
    const layers = [
      ['assigned', () => 0, (r) => r[1]],
      ['warm', (r) => r[1], (r) => r[1] + r[2]],
      ['cooling', (r) => r[1] + r[2], (r) => r[1] + r[2] + r[3]],
    ];
    const r = resample(p.timeline, durationS);
    const tl = [...r, [durationS, ...(r.at(-1)?.slice(1) ?? [0, 0, 0, 0])]];
    for (const [k, lo, hi] of layers) {
      const top = [];
      const bottom = [];
      for (let i = 0; i < tl.length - 1; i++) {
        const [a, b] = [tl[i], tl[i + 1]];
        top.push(
          `${sx(a[0]).toFixed(0)},${sy(hi(a)).toFixed(0)}`,
          `${sx(b[0]).toFixed(0)},${sy(hi(a)).toFixed(0)}`,
        );
        bottom.push(
          `${sx(a[0]).toFixed(0)},${sy(lo(a)).toFixed(0)}`,
          `${sx(b[0]).toFixed(0)},${sy(lo(a)).toFixed(0)}`,
        );
      }
      out.push(
        `<polygon fill="${COLORS[k]}" fill-opacity="0.85" stroke="none" points="${[...top, ...bottom.reverse()].join(' ')}"/>`,
      );
    }
    const wait = [];
    for (let i = 0; i < tl.length - 1; i++) {
      wait.push(
        `${sx(tl[i][0]).toFixed(1)},${sy(tl[i][4]).toFixed(1)}`,
        `${sx(tl[i + 1][0]).toFixed(1)},${sy(tl[i][4]).toFixed(1)}`,
      );
    }
    out.push(
      `<polyline fill="none" stroke="${COLORS.waiting}" stroke-width="1.5" points="${wait.join(' ')}"/>`,
    );
    if (p.note)
      out.push(`<text x="${x0 + w}" y="${y0 - 3}" font-size="10" text-anchor="end">${esc(p.note)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}

/**
 * Pareto plot: idle address-hours (x) against cold starts (y), one point per static setting; the default, the
 * adaptive policy and (when given) the adaptive policy with the pod watch marked.
 */
export function paretoSvg(title, statics, frontNames, def, adaptive, watched) {
  const W = 560;
  const H = 380;
  const x0 = 60;
  const y0 = 40;
  const w = W - x0 - 30;
  const h = H - y0 - 60;
  const all = [...statics.map((r) => r.m), def.m, adaptive.m, ...(watched ? [watched.m] : [])];
  const xMax = Math.max(0.1, ...all.map((m) => m.idleAddressHours)) * 1.05;
  // Cold starts on a log scale (log2(1 + n)): the settings that matter sit near zero.
  const lg = (v) => Math.log2(1 + v);
  const yMax = Math.max(2, Math.ceil(lg(Math.max(...all.map((m) => m.coldStarts)))));
  const sx = (v) => x0 + (w * v) / xMax;
  const sy = (v) => y0 + h - (h * lg(v)) / yMax;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">`,
    `<title>${esc(title)}</title>`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${W / 2}" y="18" font-size="13" text-anchor="middle" font-weight="bold">${esc(title)}</text>`,
    axis(x0, y0, w, h, Number(xMax.toFixed(1)), 0, 'idle address-hours', 'cold starts (log scale)'),
  ];
  for (let k = 0; k <= yMax; k++) {
    const v = 2 ** k - 1;
    out.push(`<text x="${x0 - 4}" y="${sy(v) + 3}" font-size="9" text-anchor="end">${v}</text>`);
    out.push(`<line x1="${x0}" y1="${sy(v)}" x2="${x0 + w}" y2="${sy(v)}" stroke="#eee"/>`);
  }
  const front = statics
    .filter((r) => frontNames.has(r.name))
    .sort((a, b) => a.m.idleAddressHours - b.m.idleAddressHours);
  out.push(
    `<polyline fill="none" stroke="#888" stroke-dasharray="4 3" points="${front.map((r) => `${sx(r.m.idleAddressHours).toFixed(1)},${sy(r.m.coldStarts).toFixed(1)}`).join(' ')}"/>`,
  );
  for (const r of statics) {
    const onFront = frontNames.has(r.name);
    out.push(
      `<circle cx="${sx(r.m.idleAddressHours).toFixed(1)}" cy="${sy(r.m.coldStarts).toFixed(1)}" r="${onFront ? 3.5 : 2.5}" fill="${onFront ? '#555' : '#bbb'}"><title>${esc(r.name)}: ${r.m.coldStarts} cold, ${r.m.idleAddressHours.toFixed(2)} idle address-hours</title></circle>`,
    );
  }
  const mark = (m, color, label, shape, raised = false) => {
    const x = Number(sx(m.idleAddressHours).toFixed(1));
    const y = Number(sy(m.coldStarts).toFixed(1));
    out.push(
      shape === 'diamond'
        ? `<polygon points="${x},${y - 7} ${x + 7},${y} ${x},${y + 7} ${x - 7},${y}" fill="${color}"/>`
        : `<rect x="${x - 5}" y="${y - 5}" width="10" height="10" fill="${color}"/>`,
    );
    out.push(
      `<text x="${x + 9}" y="${raised ? y - 18 : y - 6}" font-size="10" fill="${color}">${esc(label)}</text>`,
    );
  };
  mark(def.m, '#dd6b20', 'default', 'square');
  mark(adaptive.m, '#2f855a', 'adaptive', 'diamond');
  if (watched) mark(watched.m, '#2b6cb0', 'adaptive + pod watch', 'diamond', true);
  out.push(
    `<text x="${x0}" y="${H - 12}" font-size="9" fill="#555">grey: static settings (dark = Pareto front, dashed); lower-left is better</text>`,
  );
  out.push('</svg>');
  return out.join('\n');
}
