/**
 * Fuzz suite: requests to the agent's three listeners in process (the FakeRuntime behind them):
 * generated paths (the routes' own segments and odd ones, `//` prefixes, bad escapes), methods,
 * query strings, headers and bodies. Never a 5xx or a dropped connection, never an error line;
 * every 400 says what is wrong.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { fc, fuzzAsync, requestArbitrary, type FuzzRequest } from '../../api/testing-fuzz.js';
import { startTestServers, type TestServers } from './testing.js';
import { rawRequest } from '../../../test/helpers/loopback.js';

const VOCABULARY = {
  segments: ['pods', 'runningpods', 'stats', 'summary', 'metrics', 'resource', 'probes', 'cadvisor', 'configz', 'healthz', 'ping', 'logs', 'syslog',
    'containerLogs', 'exec', 'attach', 'portForward', 'run', 'debug', 'pprof', 'flags', 'v', 'cmdline', 'default', 'web', 'main', 'uid-1', 'nope'],
  parameters: ['tailLines', 'sinceSeconds', 'sinceTime', 'timestamps', 'limitBytes', 'previous', 'container', 'command', 'cmd', 'stdout', 'stdin', 'stderr',
    'tty', 'port', 'verbose', 'only_cpu_and_memory', 'exclude', 'query', 'boot', 'pattern', 'untilTime'],
  values: ['1', '10', 'true', 'ls', 'echo out', 'main', '80', '2024-05-01T10:00:00Z', 'kubelet', 'cpu'],
  headers: [{}, { accept: 'application/json' }, { 'content-type': 'application/x-www-form-urlencoded' }, { authorization: 'Bearer nope' }, { authorization: 'Basic Zm9vOmJhcg==' },
    { 'x-stream-protocol-version': 'v4.channel.k8s.io' }, { accept: '*/*;q=x' }],
  bodies: ['', '5', 'cmd=ls', '{}', 'x'.repeat(2000)],
};

/** follow=true and the CPU profile wait for as long as the client stays: the fuzz does not ask for them. */
function harmless(r: FuzzRequest): boolean {
  return !/follow|profile|trace/i.test(r.path);
}

void describe('fuzz: the agent\'s HTTP servers', () => {
  let s: TestServers;
  before(async () => {
    s = await startTestServers();
  });
  after(() => s.close());

  void it('answer every generated request below 500, and every 400 with a reason', async () => {
    const ports = fc.constantFrom<['secure' | 'readOnly' | 'healthz', boolean]>(['secure', true], ['secure', true], ['readOnly', false], ['healthz', false]);
    const arb = fc.tuple(requestArbitrary(VOCABULARY).filter(harmless), ports);
    await fuzzAsync('agent HTTP requests', arb, async ([r, [port, tls]]) => {
      const body = r.method === 'GET' || r.method === 'HEAD' ? undefined : r.body;
      const answer = await rawRequest(s.ports[port], r.path, { method: r.method, tls, headers: r.headers, ...(body === undefined ? {} : { body }), timeoutMs: 3000 });
      assert.ok(answer.status < 500, `${r.method} ${r.path} on ${port}: ${answer.status} ${answer.body.slice(0, 300)}`);
      // Node's HTTP parser itself refuses a method it does not know with a bare 400; HEAD has no body.
      if (answer.status === 400 && r.method !== 'FOO' && r.method !== 'HEAD') assert.ok(answer.body.trim().length > 0, `${r.method} ${r.path}: a 400 without a reason`);
    }, 600);
    assert.deepEqual(s.logger.at('error').map((l) => `${l.msg} ${JSON.stringify(l.fields).slice(0, 300)}`), []);
  });
});
