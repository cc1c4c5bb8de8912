/** Resource quantities (`250m`, `1.5`, `128Mi`, `1G`, `123456789n`, `1e3`) as plain numbers. */

/** Fractions divide (123456789n is exactly 0.123456789 that way); multiples multiply. */
const DIVISORS: Readonly<Record<string, number>> = { n: 1e9, u: 1e6, m: 1e3 };
const SUFFIXES: Readonly<Record<string, number>> = {
  '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** The quantity's value in base units (cores, bytes, count), or undefined when malformed. */
export function parseQuantity(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?)$/.exec(text.trim());
  if (m === null) return undefined;
  const base = Number(m[1]);
  if (m[2] !== undefined) return base * 10 ** Number(m[2].slice(1));
  const suffix = m[3] ?? '';
  const divisor = DIVISORS[suffix];
  return divisor === undefined ? base * (SUFFIXES[suffix] ?? 1) : base / divisor;
}

/** Cores as kubectl top shows them: `250m`, `1.5`. */
export function formatCores(cores: number): string {
  if (!Number.isFinite(cores)) return '-';
  if (cores < 1) return `${Math.round(cores * 1000)}m`;
  return `${Number(cores.toFixed(cores < 10 ? 2 : 1))}`;
}

/** Bytes in binary units: `512Ki`, `1.2Gi`. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '-';
  const units = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const digits = value >= 100 || unit === 0 ? 0 : 1;
  return `${value.toFixed(digits).replace(/\.0$/, '')}${units[unit] ?? ''}`;
}

/** A resource's value in the unit it is shown in (cores for cpu, bytes for memory and storage, a count otherwise). */
export function formatResource(resource: string, value: number): string {
  if (resource === 'cpu') return formatCores(value);
  if (resource === 'memory' || resource.includes('storage') || resource.startsWith('hugepages-')) return formatBytes(value);
  return String(Math.round(value));
}
