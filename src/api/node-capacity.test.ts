import assert from 'node:assert/strict';
import { cpus, totalmem } from 'node:os';
import { describe, it } from 'node:test';
import { readNodeCapacity } from './node-capacity.js';

void describe('the node capacity', () => {
  void it("is this machine's CPUs in millicores and its memory in bytes", () => {
    assert.deepEqual(readNodeCapacity(), { cpuMilli: cpus().length * 1000, memoryBytes: totalmem() });
  });
});
