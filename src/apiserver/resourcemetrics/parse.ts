/**
 * The samples of a Prometheus text exposition (what the node agents' /metrics/resource
 * answers): `name{label="value",...} value [timestamp_ms]` lines; comments and blank lines are
 * skipped, label values unescaped.
 */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
  /** Milliseconds since the epoch, when the line gives one. */
  readonly timestampMs?: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?\s*$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

function unescape(text: string): string {
  return text.replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c));
}

function parseLabels(text: string): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  let offset = 0;
  while (offset < text.length) {
    LABEL.lastIndex = offset;
    const m = LABEL.exec(text);
    if (m === null) return undefined;
    labels[m[1] ?? ''] = unescape(m[2] ?? '');
    offset = LABEL.lastIndex;
  }
  return labels;
}

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

/** Every sample of the exposition; lines that do not parse are skipped. */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (m === null) continue;
    const labels = m[2] === undefined ? {} : parseLabels(m[2]);
    if (labels === undefined) continue;
    const value = parseValue(m[3] ?? '');
    if (Number.isNaN(value)) continue;
    samples.push({ name: m[1] ?? '', labels, value, ...(m[4] === undefined ? {} : { timestampMs: Number(m[4]) }) });
  }
  return samples;
}
