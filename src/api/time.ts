/**
 * The two time formats of the API: metav1.Time (RFC 3339 in UTC with whole seconds, as
 * `2006-01-02T15:04:05Z`) and metav1.MicroTime (six fraction digits, `2006-01-02T15:04:05.000000Z`).
 * Both take milliseconds since the epoch (the Clock's now()).
 */

/** metav1.Time: whole seconds (the fraction is cut, not rounded). */
export function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** metav1.MicroTime: the fraction of a millisecond is kept to the microsecond (cut, not rounded). */
export function formatMicroTime(ms: number): string {
  const whole = Math.floor(ms);
  const micros = Math.min(999, Math.floor((ms - whole) * 1000 + 1e-6));
  return `${new Date(whole).toISOString().slice(0, 23)}${String(micros).padStart(3, '0')}Z`;
}
