import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { instrumentation } from '../routing/index.js';
import { parseRequestInfo } from '../routing/index.js';
import type { ManagedStore } from '../storage/index.js';
import { createApiServerMetrics, instrumentStore } from './index.js';

const version = { gitVersion: 'v1.30.0+orch-test', gitCommit: 'abc', major: '1', minor: '30', goVersion: 'node20', platform: 'linux/amd64' };

function labelsOf(method: string, url: string): ReturnType<typeof instrumentation> {
  const u = new URL(url, 'https://x');
  return instrumentation(parseRequestInfo(method, u.pathname, u.searchParams), method, u.searchParams.get('dryRun') === 'All');
}

void describe("orch-apiserver's own metrics", () => {
  void it('labels requests as upstream reports them', () => {
    assert.deepEqual(labelsOf('GET', '/api/v1/namespaces/default/pods'), {
      labels: { verb: 'LIST', dryRun: false, group: '', version: 'v1', resource: 'pods', subresource: '', scope: 'namespace' }, longRunning: false, mutating: false,
    });
    assert.equal(labelsOf('GET', '/api/v1/pods?watch=true').labels.verb, 'WATCH');
    assert.equal(labelsOf('GET', '/api/v1/pods?watch=true').longRunning, true);
    assert.deepEqual(labelsOf('POST', '/apis/events.orch.io/v1/namespaces/a/events?dryRun=All').labels, {
      verb: 'POST', dryRun: true, group: 'events.orch.io', version: 'v1', resource: 'events', subresource: '', scope: 'resource',
    });
    assert.equal(labelsOf('DELETE', '/api/v1/nodes').labels.verb, 'DELETECOLLECTION');
    assert.equal(labelsOf('DELETE', '/api/v1/nodes').labels.scope, 'cluster');
    assert.deepEqual([labelsOf('GET', '/api/v1/namespaces/a/pods/p/exec').labels.verb, labelsOf('GET', '/api/v1/namespaces/a/pods/p/exec').longRunning], ['CONNECT', true]);
    assert.equal(labelsOf('GET', '/api/v1/nodes/n/proxy/metrics').labels.verb, 'CONNECT');
    assert.equal(labelsOf('GET', '/api/v1/namespaces/a/pods/p/log').longRunning, true);
    assert.equal(labelsOf('GET', '/healthz').labels.verb, 'GET');
  });

  void it('counts requests by code, times the short ones, gauges the long ones, and times the store', async () => {
    let t = 0;
    const metrics = createApiServerMetrics({ version, clock: () => t });
    const list = labelsOf('GET', '/api/v1/namespaces/default/pods');
    const done = metrics.requestStarted(list.labels, false, false);
    t = 0.3;
    done(200);
    done(200);
    const watch = labelsOf('GET', '/api/v1/pods?watch=true');
    const open = metrics.requestStarted(watch.labels, true, false);
    let text = await metrics.registry.metrics();
    assert.match(text, /apiserver_longrunning_requests\{verb="WATCH",group="",version="v1",resource="pods",subresource="",scope="cluster",component="apiserver"\} 1/);
    open(200);
    metrics.watchEvent('', 'v1', 'Pod');
    const store = instrumentStore({ get: () => Promise.reject(new Error('down')) } as unknown as ManagedStore, (op, type, s) => {
      metrics.storageCall(op, type, s);
    }, () => t);
    await assert.rejects(store.get('/pods/default/web'), /down/);
    text = await metrics.registry.metrics();
    assert.match(text, /apiserver_request_total\{verb="LIST",dry_run="",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver",code="200"\} 1/);
    assert.match(text, /apiserver_request_duration_seconds_bucket\{le="0.4",verb="LIST",.*\} 1/);
    assert.match(text, /apiserver_request_duration_seconds_bucket\{le="0.2",verb="LIST",.*\} 0/);
    assert.doesNotMatch(text, /apiserver_request_duration_seconds_count\{verb="WATCH"/);
    assert.match(text, /apiserver_longrunning_requests\{verb="WATCH",.*\} 0/);
    assert.match(text, /apiserver_watch_events_total\{group="",version="v1",kind="Pod"\} 1/);
    assert.match(text, /etcd_request_duration_seconds_count\{operation="get",type="pods"\} 1/);
    assert.match(text, /orch_build_info\{major="1",minor="30",git_version="v1.30.0\+orch-test"/);
    assert.match(text, /process_cpu_seconds_total/);
  });
});
