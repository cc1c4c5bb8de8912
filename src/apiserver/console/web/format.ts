/** Times as the console shows them. */

/** An age as kubectl prints it: `12s`, `5m3s`, `3h10m`, `4d2h`, `300d`. */
export function formatAge(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  const d = Math.floor(h / 24);
  if (d < 10) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  return `${d}d`;
}

/** `since` milliseconds ago from `now`, or `-` when unknown. */
export function ageSince(since: number | undefined, now: number): string {
  return since === undefined ? '-' : formatAge(now - since);
}

/** A local wall-clock time `HH:MM:SS`. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}
