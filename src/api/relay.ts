/**
 * Relays two byte streams both ways (an upgraded SPDY connection between a client and the
 * runtime, or the agent, behind it), shared by the agent's streaming server and orch-apiserver's
 * node proxy.
 *
 * A side that ends or closes ends the other only after the bytes already relayed to it are
 * written: destroying it would drop what is still queued, and the last bytes a runtime sends
 * before it closes are the exec's status on the SPDY error stream, without which kubectl reads a
 * failed command as a success (`kubectl cp` then takes a file for a directory). Both are
 * destroyed on an error, when nothing moved for `idleTimeoutMs`, and when the other side has not
 * closed `lingerMs` after the first. The timers are I/O deadlines on real sockets.
 */
import type { Duplex } from 'node:stream';

export interface RelayOptions {
  /** Both sides are destroyed when no byte moved for this long (0: never). */
  readonly idleTimeoutMs: number;
  /** How long a side may stay open once the other closed (default 10 s). */
  readonly lingerMs?: number;
  /** Called once per failing side, before both are destroyed. */
  readonly onError: (err: Error) => void;
  /** Called when the idle limit ends the relay. */
  readonly onIdle?: () => void;
}

const DEFAULT_LINGER_MS = 10_000;

export function relayBoth(a: Duplex, b: Duplex, options: RelayOptions): void {
  let idle: NodeJS.Timeout | undefined;
  let linger: NodeJS.Timeout | undefined;
  const destroyBoth = (): void => {
    clearTimeout(idle);
    clearTimeout(linger);
    a.destroy();
    b.destroy();
  };
  const touch = (): void => {
    if (options.idleTimeoutMs <= 0) return;
    clearTimeout(idle);
    idle = setTimeout(() => {
      options.onIdle?.();
      destroyBoth();
    }, options.idleTimeoutMs);
    idle.unref();
  };
  touch();
  a.on('data', touch);
  b.on('data', touch);
  // pipe() ends the destination once the source ended and its data was handed over.
  a.pipe(b);
  b.pipe(a);
  const sides: readonly [Duplex, Duplex][] = [[a, b], [b, a]];
  for (const [side, other] of sides) {
    side.on('error', (err) => {
      options.onError(err);
      destroyBoth();
    });
    side.on('close', () => {
      if (other.destroyed) {
        clearTimeout(idle);
        clearTimeout(linger);
        return;
      }
      other.end();
      if (linger === undefined) {
        linger = setTimeout(destroyBoth, options.lingerMs ?? DEFAULT_LINGER_MS);
        linger.unref();
      }
    });
  }
}
