/**
 * The shutdown module's test-only entry: FakeLogind, a logind whose inhibit delay, locks and
 * signals the test drives. Production code must not import it.
 */
import type { InhibitLock, Logind } from './logind.js';

export class FakeLogind implements Logind {
  /** InhibitDelayMaxSec, seconds; an override sets it unless `overrideIgnored`. */
  delaySeconds = 5;
  overrideIgnored = false;
  readonly overrides: number[] = [];
  /** Locks taken, and how many are held now. */
  inhibits = 0;
  held = 0;
  closed = false;
  private readonly listeners: ((active: boolean) => void)[] = [];
  private readonly disconnects: ((reason: string) => void)[] = [];

  inhibitDelayMaxMs(): Promise<number> {
    return Promise.resolve(this.delaySeconds * 1000);
  }

  overrideInhibitDelay(seconds: number): Promise<void> {
    this.overrides.push(seconds);
    if (!this.overrideIgnored) this.delaySeconds = seconds;
    return Promise.resolve();
  }

  inhibitShutdown(): Promise<InhibitLock> {
    this.inhibits++;
    this.held++;
    let held = true;
    return Promise.resolve({
      release: () => {
        if (!held) return;
        held = false;
        this.held--;
      },
    });
  }

  onPrepareForShutdown(listener: (active: boolean) => void): void {
    this.listeners.push(listener);
  }

  onDisconnect(listener: (reason: string) => void): void {
    this.disconnects.push(listener);
  }

  close(): void {
    this.closed = true;
  }

  /** Emits PrepareForShutdown(active). */
  prepareForShutdown(active: boolean): void {
    for (const l of this.listeners) l(active);
  }

  /** The bus connection ends. */
  disconnect(reason = 'bus gone'): void {
    for (const l of this.disconnects.splice(0)) l(reason);
  }
}
