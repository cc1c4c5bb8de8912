import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { shebangCommand } from './agent.js';

void describe('shebangCommand', () => {
  async function withBin(firstLine: string, fn: (bin: string) => Promise<void>): Promise<void> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'na-shebang-'));
    try {
      const bin = path.join(dir, 'nodeagent');
      await writeFile(bin, `${firstLine}\nimport('./x.js');\n`);
      await fn(bin);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  void it('splits the environment assignments before node from the flags after it', async () => {
    await withBin('#!/usr/bin/env -S MALLOC_MMAP_THRESHOLD_=32768 A_B=x=y node --max-semi-space-size=1 --single-threaded-gc', async (bin) => {
      assert.deepEqual(await shebangCommand(bin), {
        env: { MALLOC_MMAP_THRESHOLD_: '32768', A_B: 'x=y' },
        nodeFlags: ['--max-semi-space-size=1', '--single-threaded-gc'],
      });
    });
  });

  void it('gives nothing when the line does not run node, and no environment when it sets none', async () => {
    await withBin('#!/bin/sh', async (bin) => {
      assert.deepEqual(await shebangCommand(bin), { env: {}, nodeFlags: [] });
    });
    await withBin('#!/usr/bin/env node', async (bin) => {
      assert.deepEqual(await shebangCommand(bin), { env: {}, nodeFlags: [] });
    });
  });

  void it('reads the real binary: its flags are node flags', async () => {
    const command = await shebangCommand();
    assert.ok(command.nodeFlags.length > 0);
    for (const flag of command.nodeFlags) assert.match(flag, /^--[a-z]/);
  });
});
