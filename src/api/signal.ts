/**
 * A signal without a payload: something changed, listeners subscribed to it are told. A
 * composition root creates one before the parts that raise it and the part that listens, so
 * neither needs the other to exist first (no late-assigned holder).
 */
export interface Signal {
  /** Calls every listener subscribed now, in the order they subscribed. */
  notify(): void;
  /** Adds `listener`; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
}

export function createSignal(): Signal {
  const listeners = new Set<() => void>();
  return {
    notify() {
      for (const listener of [...listeners]) listener();
    },
    subscribe(listener) {
      // A wrapper per subscription: the same function subscribed twice is told twice, and each unsubscribe removes its own.
      const entry = (): void => { listener(); };
      listeners.add(entry);
      return () => { listeners.delete(entry); };
    },
  };
}
