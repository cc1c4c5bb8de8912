import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricsCollector, parseExposition } from './index.js';

const node = (name: string): Record<string, unknown> => ({ metadata: { name } });

/** /metrics/resource of one node at `t` ms: node and one container `main` of default/web. */
function exposition(t: number, nodeCpu: number, containerCpu: number, startSeconds = 1): string {
  return [
    '# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds',
    '# TYPE node_cpu_usage_seconds_total counter',
    `node_cpu_usage_seconds_total ${nodeCpu} ${t}`,
    `node_memory_working_set_bytes 2048000 ${t}`,
    `container_cpu_usage_seconds_total{container="main",namespace="default",pod="web"} ${containerCpu} ${t}`,
    `container_memory_working_set_bytes{container="main",namespace="default",pod="web"} 4096 ${t}`,
    `container_start_time_seconds{container="main",namespace="default",pod="web"} ${startSeconds} ${startSeconds * 1000}`,
    'scrape_error 0',
  ].join('\n');
}

void describe('the resource metrics', () => {
  void it('parses the samples of a Prometheus exposition with labels, values and timestamps', () => {
    assert.deepEqual(parseExposition('# HELP x y\nup 1\na_b{x="1",y="q\\"uote"} 2.5 1700\nbad line here\nc{unclosed="} 1\n'), [
      { name: 'up', labels: {}, value: 1 },
      { name: 'a_b', labels: { x: '1', y: 'q"uote' }, value: 2.5, timestampMs: 1700 },
    ]);
  });

  void it('computes CPU as metrics-server does: nodes from two scrapes, new containers from their start', async () => {
    let now = 1_000_000;
    const answers = [exposition(1_000_000, 100, 0.5), exposition(1_000_000, 100, 0.5), exposition(1_010_000, 102, 0.7)];
    const scraped: string[] = [];
    const collector = new MetricsCollector({
      nodes: () => Promise.resolve([node('n1')]),
      scrape: (n) => {
        scraped.push((n.metadata as { name: string }).name);
        return Promise.resolve(answers.shift() ?? '');
      },
      log: () => undefined,
      now: () => now,
      resolutionMs: 10_000,
    });
    const first = await collector.snapshot();
    assert.deepEqual(first.nodes, [], 'a node scraped once has no rate yet');
    // The container: 0.5 core-seconds in the 999 000 ms since it started.
    assert.deepEqual(first.pods, [{ namespace: 'default', name: 'web', timestampMs: 1_000_000, windowMs: 999_000, containers: [{ name: 'main', cpuNanoCores: (0.5 * 1e9) / 999, memoryBytes: 4096 }] }]);
    assert.equal((await collector.snapshot()).nodes.length, 0, 'no new scrape within the resolution');
    now += 10_000;
    assert.equal((await collector.snapshot()).nodes.length, 0, 'the same reading again (the agent caches) is no new point');
    now += 10_000;
    const third = await collector.snapshot();
    assert.deepEqual(third.nodes, [{ node: 'n1', cpuNanoCores: 2e9 / 10, memoryBytes: 2048000, timestampMs: 1_010_000, windowMs: 10_000 }]);
    const c = third.pods[0]?.containers[0];
    assert.ok(c !== undefined && Math.abs(c.cpuNanoCores - 0.2e9 / 10) < 1);
    assert.deepEqual(scraped, ['n1', 'n1', 'n1']);
  });

  void it('scrapes every resolution interval once started, and logs a node that fails', async () => {
    const ticks: (() => void)[] = [];
    const logs: string[] = [];
    let stopped = false;
    const collector = new MetricsCollector({
      nodes: () => Promise.resolve([node('n1')]),
      scrape: () => Promise.reject(new Error('connection refused')),
      log: (m) => logs.push(m),
      every: (_ms, fn) => {
        ticks.push(fn);
        return () => {
          stopped = true;
        };
      },
    });
    collector.start();
    await collector.close();
    assert.equal(ticks.length, 1);
    assert.equal(stopped, true);
    assert.deepEqual(logs, ['resource metrics: scraping node n1 failed (said once until it works again): connection refused']);
  });

  void it('logs a failing node once until it answers again, and again when it fails after that', async () => {
    const logs: string[] = [];
    let now = 0;
    let answer: (() => Promise<string>) = () => Promise.reject(new Error('404 page not found'));
    const collector = new MetricsCollector({
      nodes: () => Promise.resolve([node('n1')]),
      scrape: () => answer(),
      log: (m) => logs.push(m),
      now: () => now,
      every: () => () => undefined,
    });
    for (let i = 0; i < 5; i++) {
      now += 10_000;
      await collector.snapshot();
    }
    assert.deepEqual(logs, ['resource metrics: scraping node n1 failed (said once until it works again): 404 page not found']);
    answer = () => Promise.resolve('node_cpu_usage_seconds_total 1 1000\nnode_memory_working_set_bytes 100 1000\n');
    now += 10_000;
    await collector.snapshot();
    answer = () => Promise.reject(new Error('connection refused'));
    now += 10_000;
    await collector.snapshot();
    now += 10_000;
    await collector.snapshot();
    assert.deepEqual(logs.slice(1), ['resource metrics: scraping node n1 works again', 'resource metrics: scraping node n1 failed (said once until it works again): connection refused']);
  });
});
