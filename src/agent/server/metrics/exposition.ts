/**
 * The Prometheus text exposition format (0.0.4) for the metrics computed per scrape from a
 * stats snapshot (/metrics/cadvisor, /metrics/resource), which carry explicit sample
 * timestamps as upstream's do.
 */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface Sample {
  readonly labels?: Readonly<Record<string, string>>;
  readonly value: number;
  /** Milliseconds since the epoch. */
  readonly timestampMs?: number;
}

export interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge';
  readonly samples: readonly Sample[];
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

export function renderFamilies(families: readonly Family[]): string {
  const out: string[] = [];
  for (const f of families) {
    out.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) {
      const labels = Object.entries(s.labels ?? {});
      const l = labels.length === 0 ? '' : `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
      out.push(`${f.name}${l} ${formatValue(s.value)}${s.timestampMs === undefined ? '' : ` ${Math.round(s.timestampMs)}`}`);
    }
  }
  return `${out.join('\n')}\n`;
}
