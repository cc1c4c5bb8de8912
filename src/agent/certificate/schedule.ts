/**
 * When certificates are renewed, as upstream's certificate manager decides: at a jittered 70 to
 * 90 % of the certificate's validity (so that nodes created together do not renew together),
 * at once when there is no usable certificate, and after a failure with an exponential back-off
 * (2 s, 4 s, 8 s, 16 s, then every 32 s, each with up to 10 % jitter). The waits are timers of
 * the injected Clock that keep the process alive (a bootstrap waiting for approval must not
 * exit; stop() cancels them).
 */

/** The longest single wait (setTimeout's longest delay, about 24.8 days); longer waits are taken in steps. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The renewal time of a certificate valid from `notBefore` to `notAfter`: notBefore plus
 * 70 % to 90 % of the validity, `random` in [0, 1) choosing where.
 */
export function rotationDeadline(notBefore: Date, notAfter: Date, random: number): Date {
  const total = notAfter.getTime() - notBefore.getTime();
  return new Date(notBefore.getTime() + Math.floor(total * (0.7 + 0.2 * random)));
}

export const BACKOFF_INITIAL_MS = 2000;
export const BACKOFF_CAP_MS = 32_000;

/** The pause after the `failures`-th failure in a row (1-based), `random` in [0, 1) for the jitter. */
export function backoffDelay(failures: number, random: number): number {
  const base = Math.min(BACKOFF_CAP_MS, BACKOFF_INITIAL_MS * 2 ** Math.max(0, Math.min(failures - 1, 10)));
  return Math.floor(base * (1 + 0.1 * random));
}
