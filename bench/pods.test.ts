import assert from 'node:assert/strict';
import { test } from 'node:test';
import { medianRatio, type BurstRound } from './pods.js';

const round = (rawMs: number, ...agentMs: number[]): BurstRound => ({ rawMs, agentMs });

void test('medianRatio takes the round whose agent/raw ratio is the median, not the median of each side', () => {
  const rounds = [round(7300, 10_000), round(8160, 8360), round(7190, 7760)]; // 1.37×, 1.02×, 1.08×
  assert.equal(medianRatio(rounds).round, rounds[2]);
  assert.equal(medianRatio(rounds).ratio, 7760 / 7190);
});

void test('medianRatio of an even count takes the higher middle round; of one round, that round', () => {
  const rounds = [round(1000, 1100), round(1000, 1300), round(1000, 1000), round(1000, 1200)];
  assert.equal(medianRatio(rounds).round, rounds[3]);
  assert.equal(medianRatio([round(1000, 1500)]).ratio, 1.5);
  assert.throws(() => medianRatio([]), /no rounds/);
});

void test('medianRatio reads the build asked for when rounds time two builds', () => {
  const rounds = [round(1000, 1100, 900), round(1000, 1200, 1000), round(1000, 1300, 800)];
  assert.equal(medianRatio(rounds, 0).ratio, 1.2);
  assert.equal(medianRatio(rounds, 1).ratio, 0.9);
});
