/**
 * API Priority and Fairness through HTTP and kubectl: the suggested FlowSchemas and
 * PriorityLevelConfigurations are listed by kubectl; an operator adds a level and a schema and
 * then changes the level's shares and queues through the API, and the server acts on it (a level
 * of one seat without queues turns the second concurrent request away with 429, naming the
 * schema's and the level's UIDs); the metrics count what was dispatched and rejected.
 *
 * A request holds its seat from its admission, which comes before its body is read: a POST whose
 * body is held back keeps its seat for as long as the test wants, without any timing.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { after, describe, it } from 'node:test';
import { ApiClient, kubectlCreate, runKubectl, startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const GROUP = 'flowcontrol.apiserver.orch.io';
const TESTER = { token: 'tester-token', user: 'tester', groups: ['apf-testers', 'system:authenticated'] };

interface HeldRequest {
  /** Sends the body; resolves with the response's status and headers (the connection then closes). */
  finish(): Promise<{ status: number; head: string }>;
}

/** A POST of `body` whose headers are sent now and whose body is sent by finish(). */
async function heldPost(server: ApiServer, token: string, path: string, body: unknown): Promise<HeldRequest> {
  const payload = Buffer.from(JSON.stringify(body));
  const socket = connect({ host: '127.0.0.1', port: server.port, ca: readFileSync(server.caFile), servername: 'localhost' });
  cleanups.push(() => {
    socket.destroy();
  });
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const closed = new Promise<void>((resolve, reject) => {
    socket.once('close', () => {
      resolve();
    });
    socket.once('error', reject);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  socket.write(`POST ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\nAccept: application/json\r\n`
    + `Content-Type: application/json\r\nContent-Length: ${payload.length}\r\nConnection: close\r\n\r\n`);
  return {
    finish: async () => {
      socket.write(payload);
      await closed;
      const text = Buffer.concat(chunks).toString('utf8');
      const head = text.slice(0, text.indexOf('\r\n\r\n'));
      return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? '0'), head };
    },
  };
}

/** The value of the first metric line that starts with `series` (undefined when there is none). */
async function metric(server: ApiServer, series: string): Promise<number | undefined> {
  const text = (await server.client.request('GET', '/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const labels = 'priority_level="tight",flow_schema="tight"';

void describe('API Priority and Fairness through HTTP and kubectl', () => {
  void it('lists the suggested configuration, acts on an operator\'s change of a level (1 seat, no queues: the second request is a 429 naming the UIDs) and counts it in the metrics', async () => {
    // A server concurrency of 100: a level of 100 shares gets 29 seats, one of 1 share 1 seat.
    const server = await startApiServer({ storage: 'sqlite', tokens: [TESTER], args: ['--max-requests-inflight=50', '--max-mutating-requests-inflight=50'] });
    cleanups.push(() => server.stop());

    const listed = (await runKubectl(server, ['get', 'flowschemas,prioritylevelconfigurations'])).stdout;
    for (const name of ['exempt', 'system-node-high', 'global-default', 'catch-all']) assert.match(listed, new RegExp(`flowschema\\.${GROUP.replaceAll('.', '\\.')}/${name}\\s`), listed);
    for (const name of ['exempt', 'node-high', 'leader-election', 'workload-high', 'workload-low', 'global-default', 'catch-all']) {
      assert.match(listed, new RegExp(`prioritylevelconfiguration\\.${GROUP.replaceAll('.', '\\.')}/${name}\\s`), listed);
    }
    assert.match(listed, /PRIORITYLEVEL\s+MATCHINGPRECEDENCE/, 'the flow schemas\' columns');

    await kubectlCreate(server, [
      {
        apiVersion: `${GROUP}/v1beta3`, kind: 'PriorityLevelConfiguration', metadata: { name: 'tight' },
        spec: { type: 'Limited', limited: { nominalConcurrencyShares: 100, limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 2, queueLengthLimit: 10 } } } },
      },
      {
        apiVersion: `${GROUP}/v1beta3`, kind: 'FlowSchema', metadata: { name: 'tight' },
        spec: {
          priorityLevelConfiguration: { name: 'tight' }, matchingPrecedence: 1000, distinguisherMethod: { type: 'ByUser' },
          rules: [{ subjects: [{ kind: 'Group', group: { name: 'apf-testers' } }], resourceRules: [{ verbs: ['*'], apiGroups: [''], resources: ['configmaps'], namespaces: ['*'] }] }],
        },
      },
    ]);
    const uid = async (kind: string): Promise<string> => (await runKubectl(server, ['get', kind, 'tight', '-o', 'jsonpath={.metadata.uid}'])).stdout;
    const levelUid = await uid('prioritylevelconfiguration');
    const schemaUid = await uid('flowschema');
    await waitFor('the server to give the new level its seats', async () => ((await metric(server, 'apiserver_flowcontrol_nominal_limit_seats{priority_level="tight"}')) ?? 0) > 1);

    const cmPath = '/api/v1/namespaces/default/configmaps';
    const cm = (name: string): Record<string, unknown> => ({ metadata: { name } });
    // Many seats: two requests execute at once.
    const first = await heldPost(server, TESTER.token, cmPath, cm('a1'));
    const second = await heldPost(server, TESTER.token, cmPath, cm('a2'));
    await waitFor('both requests to execute', async () => (await metric(server, `apiserver_flowcontrol_current_executing_requests{${labels}}`)) === 2);
    assert.equal((await first.finish()).status, 201);
    assert.equal((await second.finish()).status, 201);

    // The operator cuts the level to 1 share (1 seat) and no queues.
    await runKubectl(server, ['patch', 'prioritylevelconfiguration', 'tight', '--type=merge', '-p',
      JSON.stringify({ spec: { limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject', queuing: null } } } })]);
    const shown = (await runKubectl(server, ['get', 'prioritylevelconfiguration', 'tight'])).stdout;
    assert.match(shown, /tight\s+Limited\s+1\s+<none>/, shown);
    await waitFor('the server to cut the level to 1 seat', async () => (await metric(server, 'apiserver_flowcontrol_nominal_limit_seats{priority_level="tight"}')) === 1);

    const holder = await heldPost(server, TESTER.token, cmPath, cm('b1'));
    await waitFor('the first request to execute', async () => (await metric(server, `apiserver_flowcontrol_current_executing_requests{${labels}}`)) === 1);
    const tester = new ApiClient(server.url, server.client.ca, TESTER.token);
    cleanups.push(() => {
      tester.close();
    });
    const turned = await tester.request('POST', cmPath, { body: cm('b2') });
    assert.equal(turned.status, 429, turned.text);
    assert.equal(turned.body.reason, 'TooManyRequests');
    assert.ok(Number(turned.headers['retry-after']) >= 1, `Retry-After: ${String(turned.headers['retry-after'])}`);
    assert.equal(turned.headers['x-orch-pf-flowschema-uid'], schemaUid);
    assert.equal(turned.headers['x-orch-pf-prioritylevel-uid'], levelUid);
    // Requests other schemas match are not limited by this level.
    const admin = await server.client.request('POST', cmPath, { body: cm('admin') });
    assert.equal(admin.status, 201, admin.text);
    assert.notEqual(admin.headers['x-orch-pf-prioritylevel-uid'], levelUid);
    assert.equal((await holder.finish()).status, 201);
    // With its seat free again, the same request is served.
    const again = await tester.request('POST', cmPath, { body: cm('b2') });
    assert.equal(again.status, 201, again.text);
    assert.equal(again.headers['x-orch-pf-prioritylevel-uid'], levelUid);

    assert.equal(await metric(server, `apiserver_flowcontrol_dispatched_requests_total{${labels}}`), 4);
    assert.equal(await metric(server, `apiserver_flowcontrol_rejected_requests_total{${labels},reason="concurrency-limit"}`), 1);
    assert.equal(await metric(server, `apiserver_flowcontrol_current_executing_requests{${labels}}`), 0);
  });
});
