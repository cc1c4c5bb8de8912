import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { busiestWindow, callers, lastSeconds, report, summarize, timeline, type CpuProfile } from './profile-top.js';

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 9 });

void describe('profile-top', () => {
  void it('adds up self time per function from the samples\' deltas and splits ours from the rest', () => {
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(idle)', '') },
        { id: 2, callFrame: frame('pushSnapshot', 'file:///w/dist/src/agent/podsource/merger.js') },
        { id: 3, callFrame: frame('(garbage collector)', '') },
        { id: 4, callFrame: frame('parse', 'node:internal/x') },
        { id: 5, callFrame: frame('pushSnapshot', 'file:///w/dist/src/agent/podsource/merger.js') },
      ],
      // Each sample's time is the next delta: 2 → 3 ms + 4 ms (as node 5, same function), 3 → 1 ms, 4 → 2 ms, 1 → 10 ms.
      samples: [2, 5, 3, 4, 1],
      timeDeltas: [0, 3000, 4000, 1000, 2000, 10000],
    };
    const s = summarize(profile);
    assert.deepEqual(s.categories, { idle: 10, gc: 1, program: 0, ours: 7, other: 2 });
    assert.equal(s.functions[1]?.name, 'pushSnapshot (agent/podsource/merger.js:10)');
    assert.equal(s.functions[1].ms, 7);
    const lines = report(s, 5);
    assert.match(lines[0] ?? '', /busy 10 ms of 20 ms profiled: our code 70\.0 %, node and libraries 20\.0 %, GC 10\.0 %/);
    assert.match(lines[2] ?? '', /70\.0 %.*pushSnapshot/);
  });

  void it('gives the time in a function (callees included) to the chains of our frames nearest it', () => {
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(root)', ''), children: [2, 6] },
        { id: 2, callFrame: frame('setUp', 'file:///w/dist/src/agent/volumes/a.js'), children: [3] },
        { id: 3, callFrame: frame('mount', 'file:///w/dist/src/agent/volumes/m.js'), children: [4] },
        { id: 4, callFrame: frame('spawn', 'node:child_process'), children: [5] },
        { id: 5, callFrame: frame('ChildProcess.spawn', 'node:internal/child_process') },
        { id: 6, callFrame: frame('spawn', 'node:child_process') },
      ],
      // 5 (under setUp < mount) 2 ms + 4 ms, 4 (the same chain) 1 ms, 6 (no frame of ours) 3 ms, 2 (no spawn) 5 ms.
      samples: [5, 5, 4, 6, 2],
      timeDeltas: [0, 2000, 4000, 1000, 3000, 5000],
    };
    assert.deepEqual(callers(profile, 'spawn', 3), [
      { callers: 'mount (agent/volumes/m.js:10) < setUp (agent/volumes/a.js:10)', ms: 7 },
      { callers: '(no frame of ours)', ms: 3 },
    ]);
    assert.deepEqual(callers(profile, 'spawn', 1).map((c) => c.callers), ['mount (agent/volumes/m.js:10)', '(no frame of ours)']);
  });

  void it('keeps only the samples of the profile\'s last seconds', () => {
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(idle)', '') },
        { id: 2, callFrame: frame('burst', 'file:///w/dist/src/agent/a.js') },
        { id: 3, callFrame: frame('idleLoop', 'file:///w/dist/src/agent/b.js') },
      ],
      // Samples at 0, 3, 5, 6 and 8 s (the sums of the deltas), the profile's end at 9 s: the last 3 s start at 6 s.
      samples: [2, 2, 3, 1, 3],
      timeDeltas: [0, 3e6, 2e6, 1e6, 2e6, 1e6],
    };
    const window = lastSeconds(profile, 3);
    assert.deepEqual(window.samples, [1, 3]);
    const s = summarize(window);
    assert.deepEqual(s.functions.map((f) => [f.name, f.ms]), [['(idle) (native)', 2000], ['idleLoop (agent/b.js:10)', 1000]]);
    assert.deepEqual(lastSeconds(profile, 100).samples, profile.samples);
  });

  void it('cuts a profile to its busiest window and gives the busy time per slice', () => {
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(idle)', '') },
        { id: 2, callFrame: frame('syncPod', 'file:///w/dist/src/agent/podsync/index.js') },
        { id: 3, callFrame: frame('parse', 'node:internal/x') },
      ],
      // Samples at 0, 1, 2, 3, 4, 5 s; each lasts until the next (the last one 1 s): idle, idle, busy 2, busy 3, idle, busy 2.
      samples: [1, 1, 2, 3, 1, 2],
      timeDeltas: [0, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6],
    };
    assert.deepEqual(timeline(profile, 2), [0, 2000, 1000]);
    const cut = busiestWindow(profile, 2);
    assert.equal(cut.fromS, 2);
    const s = summarize(cut.profile);
    assert.equal(s.totalMs, 2000);
    assert.deepEqual(s.categories, { idle: 0, gc: 0, program: 0, ours: 1000, other: 1000 });
    // Wider than the profile: all of it.
    assert.equal(summarize(busiestWindow(profile, 60).profile).totalMs, 6000);
  });
});
