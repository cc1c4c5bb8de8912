/**
 * The certificate manager (upstream's client-go util/certificate manager): keeps one current
 * pair from a store and renews it through a requester.
 *
 * | state                                   | next renewal                                  |
 * |-----------------------------------------|-----------------------------------------------|
 * | no pair, or it expired                  | now                                           |
 * | pair differs from the template (SANs)   | now                                           |
 * | pair matches                            | notBefore + 70..90 % of its validity (once)   |
 * | no template yet (serving: no node IP)   | none; the template is looked at again         |
 * | a renewal failed                        | back-off 2 s, 4 s, ... 32 s, then every 32 s  |
 *
 * A renewal makes a new key and request (requester), stores the pair (the `-current` link
 * swings), makes it current and calls onRotated. A changing template (serving) is looked at
 * every `templateCheckMs` (1 s, upstream's), so changed node addresses renew the serving
 * certificate soon. Timers, clock and randomness are injected.
 */
import type { Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { CERT_CANCELLED, CERT_ISSUED_INVALID } from './codes.js';
import { certificateFacts, keyMatchesCertificate, satisfiesTemplate, type CertificateFacts, type CertificatePair, type CertificateTemplate } from './pki.js';
import type { CertificateRequester } from './request.js';
import { backoffDelay, MAX_TIMER_MS, rotationDeadline } from './schedule.js';
import type { CertificateStore } from './store.js';

export interface CertificateManagerOptions {
  /** For logs: client or serving. */
  readonly name: string;
  readonly store: CertificateStore;
  /** What to ask for now; undefined: nothing yet (no renewal is attempted). */
  readonly template: () => CertificateTemplate | undefined;
  readonly request: CertificateRequester;
  readonly logger: Logger;
  /** Called after a new pair was stored and made current (reload connections, swap contexts). Must not throw. */
  readonly onRotated?: (pair: CertificatePair) => void;
  /** Validity and renewal times, and the waits (timers that keep the process alive). */
  readonly clock: Clock;
  /** In [0, 1); default Math.random. */
  readonly random?: () => number;
  /** How often a changing template is looked at (serving: 1000 ms, upstream's); default 0: only at the renewal deadline. */
  readonly templateCheckMs?: number;
}

export interface CertificateManager {
  /** Loads the stored pair (an unreadable one is logged and ignored) and starts renewing. Resolves once loaded; idempotent. */
  start(): Promise<void>;
  /** The current pair; undefined when there is none or it expired. Never blocks. */
  current(): CertificatePair | undefined;
  /** When the current pair is due for renewal (undefined: no pair). */
  renewalDeadline(): Date | undefined;
  /** Stops renewing and cancels a pending request; resolves when the loop ended. Idempotent. */
  stop(): Promise<void>;
}

interface Held {
  readonly pair: CertificatePair;
  readonly facts: CertificateFacts;
  readonly deadline: number;
}

export function createCertificateManager(o: CertificateManagerOptions): CertificateManager {
  const { clock } = o;
  const now = (): number => clock.now();
  const random = o.random ?? Math.random;
  const checkMs = o.templateCheckMs ?? 0;
  const log = o.logger;
  const abort = new AbortController();
  let held: Held | undefined;
  let started: Promise<void> | undefined;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let stopped = false;

  const hold = (pair: CertificatePair): Held => {
    const facts = certificateFacts(pair.certPem);
    return { pair, facts, deadline: rotationDeadline(facts.notBefore, facts.notAfter, random()).getTime() };
  };
  const usable = (): Held | undefined => (held !== undefined && held.facts.notAfter.getTime() > now() ? held : undefined);

  const sleep = (ms: number): Promise<void> => new Promise((resolve) => {
    const timer = clock.setTimer(Math.min(MAX_TIMER_MS, ms), () => {
      wake = undefined;
      resolve();
    }, { keepAlive: true });
    wake = () => {
      wake = undefined;
      timer.cancel();
      resolve();
    };
  });

  /** Milliseconds until the next renewal for `template` (0: now). */
  const due = (template: CertificateTemplate): number => {
    const h = usable();
    if (h === undefined || !satisfiesTemplate(h.facts, template)) return 0;
    return Math.max(0, h.deadline - now());
  };

  const renew = async (template: CertificateTemplate): Promise<void> => {
    // A requester that ignores the signal must not keep stop() waiting.
    let fail: () => void = () => undefined;
    const cancelled = new Promise<never>((_resolve, reject) => {
      fail = () => {
        reject(new OrchError(CERT_CANCELLED, 'unavailable', `the ${o.name} certificate manager stopped`));
      };
    });
    cancelled.catch(() => undefined); // only the race below reads it
    if (abort.signal.aborted) fail();
    else abort.signal.addEventListener('abort', fail, { once: true });
    let pair: CertificatePair;
    try {
      pair = await Promise.race([o.request(template, usable()?.pair, abort.signal), cancelled]);
    } finally {
      abort.signal.removeEventListener('abort', fail);
    }
    if (!keyMatchesCertificate(pair.certPem, pair.keyPem)) throw new OrchError(CERT_ISSUED_INVALID, 'invalid', `the new ${o.name} certificate does not match its key`);
    const next = hold(await o.store.update(pair));
    held = next;
    log.info(`rotated the ${o.name} certificate`, {
      notAfter: next.facts.notAfter.toISOString(), renewal: new Date(next.deadline).toISOString(), path: o.store.currentPath,
    });
    try {
      o.onRotated?.(next.pair);
    } catch (err) {
      log.error(`the ${o.name} certificate rotation callback failed`, { err: messageOf(err) });
    }
  };

  const run = async (): Promise<void> => {
    let failures = 0;
    while (!stopped) {
      const template = o.template();
      if (template === undefined) {
        await sleep(checkMs > 0 ? checkMs : MAX_TIMER_MS);
        continue;
      }
      const wait = due(template);
      if (wait > 0) {
        await sleep(checkMs > 0 ? Math.min(wait, checkMs) : wait);
        continue;
      }
      try {
        await renew(template);
        failures = 0;
      } catch (err) {
        if (abort.signal.aborted) break;
        failures++;
        const pause = backoffDelay(failures, random());
        log.error(`renewing the ${o.name} certificate failed; retrying`, { err: messageOf(err), failures, retryInMs: pause });
        await sleep(pause);
      }
    }
  };

  return {
    start() {
      started ??= (async () => {
        try {
          const pair = await o.store.current();
          if (pair !== undefined && keyMatchesCertificate(pair.certPem, pair.keyPem)) held = hold(pair);
          else if (pair !== undefined) log.warn(`the stored ${o.name} certificate does not match its key; requesting a new one`, { path: o.store.currentPath });
        } catch (err) {
          log.warn(`the stored ${o.name} certificate cannot be used; requesting a new one`, { path: o.store.currentPath, err: messageOf(err) });
        }
        if (held !== undefined) {
          log.info(`loaded the ${o.name} certificate`, { notAfter: held.facts.notAfter.toISOString(), renewal: new Date(held.deadline).toISOString() });
        }
        if (!stopped) loop = run();
      })();
      return started;
    },
    current: () => usable()?.pair,
    renewalDeadline: () => (held === undefined ? undefined : new Date(held.deadline)),
    async stop() {
      stopped = true;
      abort.abort();
      wake?.();
      await started;
      await loop;
    },
  };
}
