import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fastest, type CriFloorResult } from './cri-floor.js';

void test('fastest picks the raw burst with the shortest total, the first of equals', () => {
  const burst = (concurrency: number, totalMs: number): CriFloorResult => ({ totalMs, concurrency }) as unknown as CriFloorResult;
  const bursts = [burst(2, 17_600), burst(4, 10_700), burst(8, 10_700)];
  assert.equal(fastest(bursts).concurrency, 4);
  assert.equal(fastest([burst(8, 9000)]).concurrency, 8);
  assert.throws(() => fastest([]), /no raw bursts/);
});
