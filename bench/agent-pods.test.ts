import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bestConcurrency, medianRound, type BurstRound } from './agent-pods.js';
import { fastest, type CriFloorResult } from './cri-floor.js';

function round(rawMs: number, agentMs: number): BurstRound {
  const raw = { totalMs: rawMs, concurrency: 8 } as unknown as CriFloorResult;
  return { raw, agentMs, rawSteal: 0, agentSteal: 0 };
}

void test('medianRound picks the round whose agent/raw ratio is the median, not the median of each side', () => {
  const rounds = [round(7300, 10_000), round(8160, 8360), round(7190, 7760)]; // 1.37×, 1.02×, 1.08×
  assert.equal(medianRound(rounds), rounds[2]);
});

void test('medianRound of an even count takes the higher of the middle two; of one round, that round', () => {
  const rounds = [round(1000, 1100), round(1000, 1300), round(1000, 1000), round(1000, 1200)];
  assert.equal(medianRound(rounds), rounds[3]);
  const one = [round(1000, 1500)];
  assert.equal(medianRound(one), one[0]);
});

void test('medianRound of no rounds is an error', () => {
  assert.throws(() => medianRound([]), /no rounds/);
});

void test('bestConcurrency chooses by the mean of each concurrency, not by the single fastest draw', () => {
  const burst = (concurrency: number, totalMs: number): CriFloorResult => ({ totalMs, concurrency }) as unknown as CriFloorResult;
  // 2 in flight has the single fastest draw (13.0 s) but the worst mean (14.5 s); 4 the best mean.
  const pilot = [burst(2, 13_000), burst(4, 14_000), burst(8, 14_600), burst(2, 16_000), burst(4, 13_200), burst(8, 13_400)];
  assert.equal(fastest(pilot).concurrency, 2);
  assert.equal(bestConcurrency(pilot), 4);
  assert.equal(bestConcurrency([burst(4, 10_000), burst(8, 10_000)]), 4, 'of equal means, the first tried');
  assert.equal(bestConcurrency([burst(8, 9000)]), 8);
  assert.throws(() => bestConcurrency([]), /no raw bursts/);
});
