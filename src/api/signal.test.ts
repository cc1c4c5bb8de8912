import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSignal } from './signal.js';

void describe('a signal', () => {
  void it('tells each listener subscribed at the time, until it unsubscribes', () => {
    const signal = createSignal();
    const told: string[] = [];
    signal.notify();
    const stopA = signal.subscribe(() => { told.push('a'); });
    signal.subscribe(() => { told.push('b'); });
    signal.notify();
    stopA();
    stopA();
    signal.notify();
    assert.deepEqual(told, ['a', 'b', 'b']);
  });
});
