import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatApiTraffic, parseApiTraffic } from './api-traffic.js';

const exposition = (leases: number, pods: number, events: number): string => [
  '# HELP apiserver_request_total Counter of apiserver requests',
  '# TYPE apiserver_request_total counter',
  `apiserver_request_total{verb="PUT",dry_run="",group="coordination.orch.io",version="v1",resource="leases",subresource="",scope="resource",component="apiserver",code="200"} ${String(leases)}`,
  `apiserver_request_total{verb="GET",dry_run="",group="",version="v1",resource="nodes",subresource="",scope="resource",component="apiserver",code="200"} 6`,
  `apiserver_request_total{verb="PATCH",dry_run="",group="",version="v1",resource="pods",subresource="status",scope="resource",component="apiserver",code="200"} ${String(pods)}`,
  `apiserver_request_total{verb="PATCH",dry_run="",group="",version="v1",resource="pods",subresource="status",scope="resource",component="apiserver",code="409"} 1`,
  `apiserver_watch_events_total{group="",version="v1",kind="Pod"} ${String(events)}`,
  'apiserver_request_total{verb="GET",dry_run="",group="",version="",resource="",subresource="",scope="",component="apiserver",code="200"} 4',
  'apiserver_longrunning_requests{verb="WATCH",group="",version="v1",resource="pods",subresource="",scope="cluster",component="apiserver"} 2',
  'apiserver_longrunning_requests{verb="WATCH",group="",version="v1",resource="nodes",subresource="",scope="cluster",component="apiserver"} 0',
  'apiserver_longrunning_requests{verb="CONNECT",group="",version="v1",resource="pods",subresource="exec",scope="resource",component="apiserver"} 1',
].join('\n');

void test('parseApiTraffic adds up the requests by verb and resource (codes together, none for no resource) and keeps the open watches', () => {
  const t = parseApiTraffic(exposition(3, 10, 7));
  assert.deepEqual([...t.requests], [['PUT leases', 3], ['GET nodes', 6], ['PATCH pods/status', 11]]);
  assert.deepEqual([...t.watchEvents], [['Pod', 7]]);
  assert.deepEqual([...t.watches], [['pods', 2]]);
});

void test('formatApiTraffic gives what changed over the window per minute, most first', () => {
  const line = formatApiTraffic(parseApiTraffic(exposition(3, 10, 7)), parseApiTraffic(exposition(6, 30, 7)), 30);
  assert.equal(line, 'requests per minute: PATCH pods/status 40.0, PUT leases 6.0; watch events per minute: none; watches open: pods 2');
});
