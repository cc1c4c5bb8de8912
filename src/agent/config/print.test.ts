import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { renderConfiguration, splitPrintArgs, toWireObject } from './print.js';
import { HEADER, resolveArgs, tempFiles } from './fixtures.js';

void describe('config print', () => {
  void it('splits its own flags from the agent flags', () => {
    const s = splitPrintArgs(['--output', 'json', '--max-pods=3', '--show-source', '-o=yaml']);
    assert.deepEqual(s.print, { output: 'yaml', showSource: true });
    assert.deepEqual(s.rest, ['--max-pods=3']);
    assert.deepEqual(splitPrintArgs(['--output=xml']).errors, ['invalid value "xml" for flag --output: use yaml or json']);
  });

  void it('prints a complete NodeagentConfiguration that reads back to the same effective configuration', async () => {
    const deprecatedFlags = ['--max-pods=42', '--eviction-hard=memory.available<1Gi', '--cluster-dns=10.0.0.10',
      '--register-with-taints=a=b:NoSchedule', '--sync-frequency=1m30s', '--feature-gates=QOSReserved=true', '-v=2',
      '--manifest-url-header=a:b', '--reserved-memory=0:memory=1Gi'];
    const r = await resolveArgs(deprecatedFlags);
    for (const output of ['yaml', 'json'] as const) {
      const text = renderConfiguration(r.config, r.sources, r.options, { output, showSource: false });
      const wire = (output === 'yaml' ? parse(text) : JSON.parse(text)) as Record<string, unknown>;
      assert.equal(wire.kind, 'NodeagentConfiguration');
      assert.equal(wire.apiVersion, 'nodeagent.config.orch.io/v1beta1');
      assert.equal(wire.syncFrequency, '1m30s');
      assert.equal(wire.cpuCFSQuotaPeriod, '100ms');
      assert.equal(wire.streamingConnectionIdleTimeout, '4h0m0s');
      const dir = await tempFiles({});
      await writeFile(join(dir, `c.${output}`), text);
      const again = await resolveArgs([`--config=c.${output}`], { cwd: dir });
      assert.deepEqual(again.config, r.config, `the printed ${output} reads back unchanged`);
    }
  });

  void it('shows where each field that is not at its default came from', async () => {
    const dir = await tempFiles({
      'c.yaml': `${HEADER}maxPods: 10\nauthorization:\n  mode: AlwaysAllow\nauthentication:\n  webhook:\n    enabled: false\n`,
      'd/a.conf': `${HEADER}evictionHard:\n  memory.available: 1Gi\n`,
    });
    const r = await resolveArgs(['--config=c.yaml', '--config-dir=d', '--port=10251', '--root-dir=/srv/na'], { cwd: dir });
    const yaml = renderConfiguration(r.config, r.sources, r.options, { output: 'yaml', showSource: true });
    assert.match(yaml, new RegExp(`^maxPods: 10 # config file ${join(dir, 'c.yaml')}$`, 'm'));
    assert.match(yaml, /^port: 10251 # flag --port$/m);
    assert.match(yaml, new RegExp(`# drop-in ${join(dir, 'd/a.conf')}\\nevictionHard:`));
    assert.match(yaml, /^# --root-dir=\/srv\/na \(flag --root-dir\)$/m);
    assert.doesNotMatch(yaml, /^readOnlyPort: 0 #/m);
    const json = JSON.parse(renderConfiguration(r.config, r.sources, r.options, { output: 'json', showSource: true })) as {
      configuration: Record<string, unknown>; sources: Record<string, string>;
    };
    assert.equal(json.configuration.maxPods, 10);
    assert.equal(json.sources.port, 'flag --port');
  });

  void it('leaves out unset optional fields', async () => {
    const r = await resolveArgs([]);
    const wire = toWireObject(r.config);
    assert.equal('tracing' in wire, false);
    assert.equal('maxParallelImagePulls' in wire, false);
    assert.deepEqual(wire.enforceNodeAllocatable, ['pods']);
  });
});
