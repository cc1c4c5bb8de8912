/**
 * A preload for the agent's process (`node --import=dist/bench/experiments/count-preload.js`),
 * used by burst-counts.ts, never by the agent itself: it counts what the process asks of node
 * and its libraries, by wrapping them before the agent loads: HTTP(S) requests by method and path
 * (names and namespaces replaced by NAME and NS), TLS connections made, CRI unary calls by method
 * (grpc-js's Client), processes spawned, file system calls by function (the synchronous ones and
 * a few of fs/promises' also by the two nearest frames of the agent's own code) and log lines by
 * message. On SIGUSR2 it writes what it counted so far, with the process's CPU time, as JSON to
 * `$COUNT_PRELOAD_DIR/counts-<pid>-<ms>.json` (a snapshot; counting goes on).
 */
import * as childProcess from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';

const counts: Record<string, number> = {};
const count = (key: string): void => {
  counts[key] = (counts[key] ?? 0) + 1;
};

const OURS = '/dist/src/';

/** The key with the two nearest frames of the agent's own code that led to this call. */
function countWithCallers(key: string): void {
  const frames = (new Error().stack ?? '').split('\n').slice(3).filter((l) => l.includes(OURS)).slice(0, 2);
  count(`${key} @ ${frames.map((l) => l.trim().replace(/^at /, '').replace(/\(?file:\/\/\S*\/dist\/src\//, '').replace(/\)$/, '')).join(' < ')}`);
}

/** Path without the query, object names and namespaces as NAME and NS. */
export function pathPattern(p: string): string {
  return (p.split('?')[0] ?? '')
    .replace(/\/namespaces\/[^/]+/, '/namespaces/NS')
    .replace(/\/(pods|events|serviceaccounts|secrets|configmaps|leases|nodes)\/[^/]+/, '/$1/NAME');
}

type Wrapped = (...args: unknown[]) => unknown;

function wrap(target: object, name: string, before: (args: unknown[]) => void): void {
  const original = (target as Record<string, unknown>)[name];
  if (typeof original !== 'function') return;
  const fn = original as Wrapped;
  (target as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]): unknown {
    before(args);
    return fn.apply(this, args);
  };
}

for (const [scheme, mod] of [['https', https], ['http', http]] as const) {
  wrap(mod, 'request', (args) => {
    const [target, options] = args as [URL | string | { path?: string }, { method?: string } | undefined];
    const url = typeof target === 'string' ? new URL(target) : target;
    const pathname = url instanceof URL ? url.pathname : (url.path ?? '');
    const watch = url instanceof URL && url.search.includes('watch') ? ' (watch)' : '';
    count(`${scheme} ${options?.method ?? 'GET'} ${pathPattern(pathname)}${watch}`);
  });
}
wrap(tls, 'connect', () => {
  count('tls connections');
});
wrap(grpc.Client.prototype, 'makeUnaryRequest', (args) => {
  count(`cri ${String(args[0]).split('/').pop() ?? ''}`);
});
wrap(childProcess.ChildProcess.prototype, 'spawn', (args) => {
  const o = args[0] as { file?: string; args?: string[] };
  count(`spawn ${path.basename(o.file ?? '')} ${(o.args ?? []).slice(1, 3).join(' ')}`);
});
const withCallers = new Set(['readdir', 'lstat', 'stat', 'chmod', 'symlink', 'mkdir']);
for (const f of ['writeFile', 'mkdir', 'rename', 'rm', 'readFile', 'readdir', 'stat', 'lstat', 'open', 'symlink', 'readlink', 'chmod', 'unlink', 'rmdir', 'mkdtemp']) {
  wrap(fsp, f, () => {
    count(`fs/promises ${f}`);
    if (withCallers.has(f)) countWithCallers(`fs/promises ${f}`);
  });
}
for (const f of ['writeFileSync', 'readFileSync', 'statSync', 'lstatSync', 'mkdirSync', 'readdirSync', 'readlinkSync', 'chmodSync', 'openSync']) {
  wrap(fs, f, () => {
    count(`fs ${f}`);
    countWithCallers(`fs ${f}`);
  });
}
for (const stream of [process.stdout, process.stderr]) {
  wrap(stream, 'write', (args) => {
    const line = String(args[0]);
    count(`log lines: ${/"msg":"([^"]*)"/.exec(line.slice(0, 300))?.[1] ?? line.slice(0, 40)}`);
  });
}
// ES modules' named imports of node's modules (import { request } from 'node:https') follow the patched exports.
syncBuiltinESMExports();

process.on('SIGUSR2', () => {
  const dir = process.env.COUNT_PRELOAD_DIR ?? '/tmp';
  fs.writeFileSync(path.join(dir, `counts-${process.pid}-${Date.now()}.json`), JSON.stringify({ cpu: process.cpuUsage(), counts }));
});
