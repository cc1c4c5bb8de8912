import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveArgs, problemsOf } from '../fixtures.js';
import { parseArgs } from './parser.js';
import { FLAGS_BY_NAME, FLAGS_BY_SHORT } from './table.js';
import { parseGoBool, parseGoInt } from './values.js';

const lookup = { byName: (n: string) => FLAGS_BY_NAME.get(n), byShort: (s: string) => FLAGS_BY_SHORT.get(s) };
const texts = (argv: string[]): [string, string][] => parseArgs(argv, lookup).occurrences.map((o) => [o.given, o.text]);

void describe('pflag parsing', () => {
  void it('takes --flag=value and --flag value', () => {
    assert.deepEqual(texts(['--port=1', '--port', '2']), [['--port', '1'], ['--port', '2']]);
  });

  void it('takes booleans bare or with =, never consuming the next argument', () => {
    const p = parseArgs(['--fail-swap-on', 'false', '--runonce=false'], lookup);
    assert.deepEqual(p.occurrences.map((o) => o.text), ['true', 'false']);
    assert.deepEqual(p.positionals, ['false']);
  });

  void it('takes shorthands -v 3, -v=3, -v3 and -h', () => {
    assert.deepEqual(texts(['-v', '3', '-v=4', '-v5', '-h']), [['-v', '3'], ['-v', '4'], ['-v', '5'], ['-h', 'true']]);
    assert.deepEqual(texts(['--v=6']), [['--v', '6']]);
  });

  void it('reads underscores as dashes and stops at --', () => {
    const p = parseArgs(['--max_pods=3', '--', '--port=1'], lookup);
    assert.deepEqual(p.occurrences.map((o) => o.given), ['--max-pods']);
    assert.deepEqual(p.positionals, ['--port=1']);
  });

  void it('reports unknown flags and missing values', () => {
    const p = parseArgs(['--nope', '-x', '--port'], lookup);
    assert.deepEqual(p.errors, ['unknown flag: --nope', "unknown shorthand flag: 'x' in -x", 'flag needs an argument: --port']);
  });
});

void describe('flag values', () => {
  void it('parses booleans and integers as Go does', () => {
    assert.equal(parseGoBool('T'), true);
    assert.equal(parseGoBool('0'), false);
    assert.equal(parseGoBool('yes'), undefined);
    assert.equal(parseGoInt('0x10', 32), 16);
    assert.equal(parseGoInt('010', 32), 8);
    assert.equal(parseGoInt('-5', 32), -5);
    assert.equal(parseGoInt('2147483648', 32), undefined);
    assert.equal(parseGoInt('1.5', 32), undefined);
  });

  void it('appends repeated list flags and merges repeated map flags', async () => {
    const r = await resolveArgs([
      '--cluster-dns=10.0.0.10', '--cluster-dns=10.0.0.11,10.0.0.12',
      '--node-labels=a=1', '--node-labels=b=2,a=3',
      '--system-reserved=cpu=100m, memory=1Gi',
    ]);
    assert.deepEqual(r.config.clusterDNS, ['10.0.0.10', '10.0.0.11', '10.0.0.12']);
    assert.deepEqual(r.options.nodeLabels, { a: '3', b: '2' });
    assert.deepEqual(r.config.systemReserved, { cpu: '100m', memory: '1Gi' });
  });

  void it('parses eviction thresholds with <, grace periods and reclaims with =', async () => {
    const r = await resolveArgs([
      '--eviction-hard=memory.available<1Gi', '--eviction-soft=memory.available<2Gi',
      '--eviction-soft-grace-period=memory.available=1m30s', '--eviction-minimum-reclaim=imagefs.available=2Gi',
    ]);
    assert.deepEqual(r.config.evictionHard, { 'memory.available': '1Gi' });
    assert.deepEqual(r.config.evictionSoft, { 'memory.available': '2Gi' });
    assert.deepEqual(r.config.evictionSoftGracePeriod, { 'memory.available': '1m30s' });
    assert.deepEqual(r.config.evictionMinimumReclaim, { 'imagefs.available': '2Gi' });
  });

  void it('accumulates --manifest-url-header in order and --reserved-memory by NUMA node', async () => {
    const r = await resolveArgs([
      '--manifest-url-header=a:hello,b:again', '--manifest-url-header=a:world',
      '--reserved-memory=0:memory=1Gi,hugepages-2Mi=2Gi', '--reserved-memory=1:memory=2Gi',
    ]);
    assert.deepEqual(r.config.staticPodURLHeader, { a: ['hello', 'world'], b: ['again'] });
    assert.deepEqual(r.config.reservedMemory, [
      { numaNode: 0, limits: { memory: '1Gi', 'hugepages-2Mi': '2Gi' } },
      { numaNode: 1, limits: { memory: '2Gi' } },
    ]);
  });

  void it('parses taints, vmodule and feature gates', async () => {
    const r = await resolveArgs([
      '--register-with-taints=dedicated=gpu:NoSchedule,spot:PreferNoSchedule',
      '--vmodule=pod*=4,config=2', '--feature-gates=QOSReserved=true', '--feature-gates=NodeSwap=true',
    ]);
    assert.deepEqual(r.config.registerWithTaints, [
      { key: 'dedicated', value: 'gpu', effect: 'NoSchedule', timeAdded: null },
      { key: 'spot', value: '', effect: 'PreferNoSchedule', timeAdded: null },
    ]);
    assert.deepEqual(r.config.logging.vmodule, [{ filePattern: 'pod*', verbosity: 4 }, { filePattern: 'config', verbosity: 2 }]);
    assert.deepEqual(r.config.featureGates, { QOSReserved: true, NodeSwap: true });
    assert.equal(r.gates.enabled('QOSReserved'), true);
  });

  void it('names the flag and what is allowed for every bad value', async () => {
    const problems = await problemsOf([
      '--sync-frequency=5', '--node-labels=novalue', '--feature-gates=X', '--register-with-taints=k=v:Bad',
      '--reserved-memory=x:memory=1Gi', '--vmodule=p', '--manifest-url-header=nocolon', '--enable-server=maybe',
    ]);
    assert.equal(problems.length, 8, problems.join('\n'));
    assert.match(problems[0] ?? '', /^invalid value "5" for flag --sync-frequency: /);
    assert.match(problems[1] ?? '', /--node-labels: malformed pair "novalue", expected key=value/);
    assert.match(problems[2] ?? '', /--feature-gates: malformed pair "X"/);
    assert.match(problems[3] ?? '', /--register-with-taints: .*Bad/);
    assert.match(problems[4] ?? '', /--reserved-memory: expected <numa-node>:<resource>=<quantity>/);
    assert.match(problems[5] ?? '', /--vmodule: malformed item "p", expected pattern=N/);
    assert.match(problems[6] ?? '', /--manifest-url-header: malformed header "nocolon", expected name:value/);
    assert.match(problems[7] ?? '', /--enable-server: expected true or false/);
  });
});
