/** Turns measurements into result rows (stats, ratios, targets) and prints the table. */
import { round, summarize } from './stats.js';
import type { Figure, Measurement, RowResult, RowSpec, Target, Unit } from './types.js';

export function targetText(target: Target | null, unit: Unit): string | null {
  if (!target) return null;
  const op = target.op === '<=' ? '≤' : target.op === '>=' ? '≥' : '<';
  if (target.metric === 'ratio') return `${op} ${target.value}x baseline`;
  if (target.metric === 'over') return `${op} baseline + ${target.value}${unit === 'ms' ? ' ms' : ` ${unit}`}`;
  return `${op} ${target.value}${unit === '%' ? '%' : unit === 'count' ? '' : ` ${unit}`}`;
}

function meets(target: Target | null, median: number | null, ratio: number | null, baselineMedian: number | null): boolean | null {
  if (!target) return null;
  const over = median !== null && baselineMedian !== null ? median - baselineMedian : null;
  const value = target.metric === 'ratio' ? ratio : target.metric === 'over' ? over : median;
  if (value === null) return null;
  if (target.op === '<=') return value <= target.value;
  if (target.op === '>=') return value >= target.value;
  return value < target.value;
}

function emptyRow(figure: Figure, spec: RowSpec): RowResult {
  return {
    figure: figure.id,
    name: spec.name,
    unit: spec.unit,
    status: 'error',
    n: 0,
    median: null,
    p90: null,
    min: null,
    max: null,
    baseline: null,
    baselineMedian: null,
    baselineP90: null,
    ratio: null,
    baselines: [],
    target: targetText(spec.target, spec.unit),
    meetsTarget: null,
    note: null,
    description: spec.description,
  };
}

export function pendingRows(figure: Figure, note: string): RowResult[] {
  return figure.rows.map((spec) => ({ ...emptyRow(figure, spec), status: 'pending', note }));
}

export function errorRows(figure: Figure, message: string): RowResult[] {
  return figure.rows.map((spec) => ({ ...emptyRow(figure, spec), note: `error: ${message}` }));
}

export function buildRows(figure: Figure, measurements: Measurement[]): RowResult[] {
  return figure.rows.map((spec) => {
    const row = emptyRow(figure, spec);
    const m = measurements.find((candidate) => candidate.row === spec.name);
    if (!m) return { ...row, note: 'error: the figure reported nothing for this row' };
    const own = m.samples ? summarize(m.samples) : null;
    row.baselines = (m.baselines ?? []).map((series) => {
      const s = summarize(series.samples);
      return {
        name: series.name,
        n: s?.n ?? 0,
        median: round(s?.median ?? null),
        p90: round(s?.p90 ?? null),
        ratio: own && s && s.median !== 0 ? round(own.median / s.median, 3) : null,
      };
    });
    const primary = row.baselines[0];
    if (primary) {
      row.baseline = primary.name;
      row.baselineMedian = primary.median;
      row.baselineP90 = primary.p90;
      row.ratio = primary.ratio;
    }
    const notes = [m.note];
    if (m.error) {
      row.status = 'error';
      notes.unshift(`error: ${m.error}`);
    } else if (m.status) {
      row.status = m.status;
    } else if (own) {
      row.status = 'ok';
      row.n = m.count ?? own.n;
      row.median = round(own.median);
      row.p90 = round(own.p90);
      row.min = round(own.min);
      row.max = round(own.max);
      row.meetsTarget = meets(spec.target, own.median, row.ratio, row.baselineMedian);
    } else {
      notes.unshift('error: no samples');
    }
    row.note = notes.filter(Boolean).join('; ') || null;
    return row;
  });
}

export function formatValue(value: number | null, unit: Unit): string {
  if (value === null) return '—';
  if (unit === 'ms') {
    const digits = value < 1 ? 3 : value < 10 ? 2 : value < 100 ? 1 : 0;
    return `${value.toFixed(digits)} ms`;
  }
  if (unit === '%') return `${value.toFixed(1)}%`;
  if (unit === 'x') return `${value.toFixed(2)}x`;
  if (unit === 'count') return String(Math.round(value));
  return `${value.toFixed(1)} ${unit}`;
}

function formatRatio(ratio: number | null): string {
  if (ratio === null) return '—';
  return ratio < 10 ? `${ratio.toFixed(2)}x` : `${ratio.toFixed(0)}x`;
}

export function renderTable(rows: RowResult[]): string {
  const header = ['figure', 'median', 'p90', 'n', 'baseline', 'base median', 'ratio', 'target', 'meets'];
  const lines: string[][] = [header];
  const notes: string[] = [];
  for (const row of rows) {
    let noteRef = '';
    if (row.note) {
      notes.push(row.note);
      noteRef = ` [${notes.length}]`;
    }
    const value = (v: number | null) => (row.status === 'ok' ? formatValue(v, row.unit) : row.status);
    const [first, ...others] = row.baselines;
    lines.push([
      row.name + noteRef,
      value(row.median),
      row.status === 'ok' ? formatValue(row.p90, row.unit) : '',
      row.status === 'ok' ? String(row.n) : '',
      first?.name ?? '—',
      first ? formatValue(first.median, row.unit) : '—',
      formatRatio(row.ratio),
      row.target ?? '—',
      row.meetsTarget === null ? '—' : row.meetsTarget ? 'yes' : 'NO',
    ]);
    for (const other of others) lines.push(['', '', '', '', other.name, formatValue(other.median, row.unit), formatRatio(other.ratio), '', '']);
  }
  const widths = header.map((_, col) => Math.max(...lines.map((line) => [...(line[col] ?? '')].length)));
  const numeric = new Set([1, 2, 3, 5, 6]);
  const render = (line: string[]) =>
    line
      .map((cell, col) => {
        const pad = ' '.repeat(widths[col]! - [...cell].length);
        return numeric.has(col) ? pad + cell : cell + pad;
      })
      .join('  ')
      .trimEnd();
  const out = [render(lines[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.slice(1).map(render)];
  if (notes.length > 0) out.push('', ...notes.map((note, i) => `[${i + 1}] ${note}`));
  return out.join('\n');
}
