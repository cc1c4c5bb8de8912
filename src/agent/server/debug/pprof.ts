/**
 * /debug/pprof/: the profiling handlers (enableProfilingHandler), Node's equivalents of Go's
 * pprof: `profile?seconds=N` (default 30) is a CPU profile of the agent's thread taken with
 * the inspector's Profiler (the .cpuprofile JSON that Chrome DevTools and speedscope open),
 * `heap` a V8 heap snapshot (.heapsnapshot JSON), `cmdline` the command line. With
 * enableContentionProfiling, `block` is the event-loop delay histogram (how long callbacks
 * waited for the one thread: Node's form of blocking) and `mutex` the event-loop utilization
 * (the share of time the thread was busy); without it they are unknown profiles (404), as is
 * every other name. One CPU profile at a time.
 */
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { getHeapSnapshot } from 'node:v8';
import type { Clock } from '../../../api/clock.js';
import { HttpError, intParam, sendJson, sendText } from '../http.js';
import type { RequestContext, Route } from '../router.js';

const PROFILES: Readonly<Record<string, string>> = {
  profile: 'CPU profile (.cpuprofile JSON). Use ?seconds=N (default 30).',
  heap: 'V8 heap snapshot (.heapsnapshot JSON).',
  cmdline: 'The command line of the agent.',
  block: 'Event-loop delay histogram (needs enableContentionProfiling).',
  mutex: 'Event-loop utilization since start (needs enableContentionProfiling).',
};

function index(): string {
  const rows = Object.entries(PROFILES).map(([n, d]) => `<tr><td><a href="${n}">${n}</a></td><td>${d}</td></tr>`).join('\n');
  return `<html><head><title>/debug/pprof/</title></head><body>\n/debug/pprof/<br>\n<p>Profiles of the nodeagent process:</p>\n<table>\n${rows}\n</table>\n</body></html>\n`;
}

/** `clock` times the CPU profiles (the agent's clock; tests move a fake one). */
export function pprofRoutes(o: { contention: boolean; clock: Pick<Clock, 'setTimer'> }): Route[] {
  let profiling = false;
  const delay = o.contention ? monitorEventLoopDelay({ resolution: 10 }) : undefined;
  delay?.enable();
  const elu: EventLoopUtilization | undefined = o.contention ? performance.eventLoopUtilization() : undefined;

  async function cpuProfile({ res, url }: RequestContext): Promise<void> {
    const seconds = intParam(url.searchParams, 'seconds') ?? 30;
    if (seconds <= 0 || seconds > 3600) throw new HttpError(400, `invalid value ${seconds} of query parameter seconds: must be from 1 to 3600`);
    if (profiling) throw new HttpError(500, 'Could not enable CPU profiling: cpu profiling already in use');
    profiling = true;
    const session = new Session();
    session.connect();
    try {
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
      await new Promise<void>((resolve) => {
        const t = o.clock.setTimer(seconds * 1000, resolve);
        res.once('close', () => { t.cancel(); resolve(); });
      });
      const { profile } = await session.post('Profiler.stop');
      const body = Buffer.from(JSON.stringify(profile));
      if (res.destroyed) return;
      res.writeHead(200, {
        'content-type': 'application/json', 'content-length': body.length,
        'content-disposition': 'attachment; filename="nodeagent.cpuprofile"', 'x-content-type-options': 'nosniff',
      }).end(body);
    } finally {
      session.disconnect();
      profiling = false;
    }
  }

  async function serve(ctx: RequestContext): Promise<void> {
    const name = ctx.params.name ?? '';
    const { res } = ctx;
    switch (name) {
      case '':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(index());
        return;
      case 'profile':
        await cpuProfile(ctx);
        return;
      case 'heap':
        res.writeHead(200, { 'content-type': 'application/json', 'content-disposition': 'attachment; filename="nodeagent.heapsnapshot"' });
        await pipeline(getHeapSnapshot(), res);
        return;
      case 'cmdline':
        sendText(res, 200, process.argv.join('\x00'));
        return;
      case 'block':
        if (delay === undefined) break;
        sendJson(res, 200, {
          kind: 'EventLoopDelay', unit: 'nanoseconds', count: delay.count, min: delay.min, max: delay.max, mean: delay.mean, stddev: delay.stddev,
          percentiles: Object.fromEntries([50, 90, 99, 99.9].map((p) => [String(p), delay.percentile(p)])),
        });
        return;
      case 'mutex':
        if (elu === undefined) break;
        sendJson(res, 200, { kind: 'EventLoopUtilization', ...performance.eventLoopUtilization(elu) });
        return;
      default:
        break;
    }
    throw new HttpError(404, 'Unknown profile');
  }

  return [
    { pattern: '/debug/pprof', methods: ['GET'], bucket: 'debug', handle: serve },
    { pattern: '/debug/pprof/:name', methods: ['GET'], bucket: 'debug', longRunning: true, handle: serve },
    { pattern: '/debug/pprof/', methods: ['GET'], bucket: 'debug', handle: serve },
  ];
}
