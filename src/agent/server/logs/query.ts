/**
 * The node log query of /logs/?query=... (enableSystemLogQuery with the NodeLogQuery gate),
 * as upstream: `query` names services (journal units) or one file (a value with a slash);
 * sinceTime/untilTime (RFC 3339), tailLines (0..100000), pattern (a regular expression) and
 * boot (<= 0) filter the journal. Undecodable values are a 400; a query that cannot be run
 * (file and service together, two files, file with options, sinceTime after untilTime, ...)
 * a 406. Services the journal does not know are read from /var/log/<service> or
 * /var/log/<service>.log, as upstream's fallback (filters do not apply there).
 */
import { execFile, spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { HttpError, TEXT } from '../http.js';
import { resolveLogPath, sendFile } from './files.js';
import { quoteValue } from '../../../api/quote.js';

const execFileAsync = promisify(execFile);
const MAX_TAIL_LINES = 100_000;
const MAX_SERVICES = 100;
const MAX_SERVICE_LENGTH = 256;
const UNSAFE_SERVICE = /[^a-zA-Z\-_.:0-9@]+/;

export interface NodeLogQuery {
  readonly services: readonly string[];
  readonly files: readonly string[];
  readonly sinceTime?: Date;
  readonly untilTime?: Date;
  readonly tailLines?: number;
  readonly pattern?: string;
  readonly boot?: number;
}

function invalid(field: string, value: string, why: string): string {
  return `${field}: Invalid value: ${quoteValue(value)}: ${why}`;
}

function time(query: URLSearchParams, name: string, errors: string[]): Date | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  const ok = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v));
  if (!ok) errors.push(invalid(name, v, 'invalid time format'));
  return ok ? new Date(v) : undefined;
}

function int(query: URLSearchParams, name: string, errors: string[]): number | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  if (!/^[-+]?\d+$/.test(v)) {
    errors.push(invalid(name, v, `strconv.Atoi: parsing ${quoteValue(v)}: invalid syntax`));
    return undefined;
  }
  return Number(v);
}

/** The query of the request, undefined when it has none (plain file serving); HttpError 400 when undecodable. */
export function parseNodeLogQuery(query: URLSearchParams): NodeLogQuery | undefined {
  const errors: string[] = [];
  const services: string[] = [];
  const files: string[] = [];
  const queries = query.getAll('query');
  for (const q of queries) {
    if (/[/\\]/.test(q)) files.push(q);
    else if (q.trim() !== '') services.push(q);
  }
  if (query.has('query') && services.length === 0 && files.length === 0) errors.push(invalid('query', queries.join(','), 'query cannot be empty'));
  const sinceTime = time(query, 'sinceTime', errors);
  const untilTime = time(query, 'untilTime', errors);
  const boot = int(query, 'boot', errors);
  const tailLines = int(query, 'tailLines', errors);
  const pattern = query.get('pattern') ?? '';
  if (errors.length > 0) throw new HttpError(400, `[${errors.join(', ')}]`);
  const nlq: NodeLogQuery = {
    services, files,
    ...(sinceTime === undefined ? {} : { sinceTime }), ...(untilTime === undefined ? {} : { untilTime }),
    ...(tailLines === undefined ? {} : { tailLines }), ...(pattern === '' ? {} : { pattern }), ...(boot === undefined ? {} : { boot }),
  };
  return Object.keys(nlq).length === 2 && services.length === 0 && files.length === 0 ? undefined : nlq;
}

/** Problems that make the query impossible (answered 406). */
export function validateNodeLogQuery(q: NodeLogQuery): string[] {
  const errors: string[] = [];
  for (const s of q.services) {
    if (s.length > MAX_SERVICE_LENGTH) errors.push(invalid('query', s, `length must be less than ${MAX_SERVICE_LENGTH}`));
    else if (UNSAFE_SERVICE.test(s)) errors.push(invalid('query', s, 'input contains unsupported characters'));
  }
  if (q.services.length > MAX_SERVICES) errors.push(`query: Too many: ${q.services.length}: must have at most ${MAX_SERVICES} items`);
  const options = q.sinceTime !== undefined || q.untilTime !== undefined || q.tailLines !== undefined || q.pattern !== undefined || q.boot !== undefined;
  if (q.files.length === 0 && q.services.length === 0) errors.push('query: Required value: cannot be empty with options');
  else if (q.files.length > 0 && q.services.length > 0) errors.push(invalid('query', `${q.files.join(',')}, ${q.services.join(',')}`, 'cannot specify a file and service'));
  else if (q.files.length > 1) errors.push(invalid('query', q.files.join(','), 'cannot specify more than one file'));
  else if (q.files.length === 1 && options) errors.push(invalid('query', q.files.join(','), 'cannot specify file with options'));
  if (q.sinceTime !== undefined && q.untilTime !== undefined && q.sinceTime > q.untilTime) errors.push(invalid('untilTime', q.untilTime.toISOString(), 'must be after `sinceTime`'));
  if (q.boot !== undefined && q.boot > 0) errors.push(invalid('boot', String(q.boot), 'must be less than 1'));
  if (q.tailLines !== undefined && (q.tailLines < 0 || q.tailLines > MAX_TAIL_LINES)) errors.push(invalid('tailLines', String(q.tailLines), `must be between 0 and ${MAX_TAIL_LINES}, inclusive`));
  if (q.pattern !== undefined) {
    try {
      new RegExp(q.pattern);
    } catch (err) {
      errors.push(invalid('pattern', q.pattern, err instanceof Error ? err.message : String(err)));
    }
  }
  return errors;
}

const journalDate = (d: Date): string => d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC').replace(/Z$/, ' UTC');

/** journalctl's arguments for the services (upstream's order). */
export function journalArgs(q: NodeLogQuery, services: readonly string[]): string[] {
  return [
    '--utc', '--no-pager', '--output=short-precise',
    ...(q.sinceTime === undefined ? [] : [`--since=${journalDate(q.sinceTime)}`]),
    ...(q.untilTime === undefined ? [] : [`--until=${journalDate(q.untilTime)}`]),
    ...(q.tailLines === undefined ? [] : ['--pager-end', `--lines=${q.tailLines}`]),
    ...services.map((s) => `--unit=${s}`),
    ...(q.pattern === undefined ? [] : [`--grep=${q.pattern}`]),
    ...(q.boot === undefined ? [] : ['--boot', String(q.boot)]),
  ];
}

async function journalUnits(): Promise<Set<string>> {
  try {
    const { stdout } = await execFileAsync('journalctl', ['--field', '_SYSTEMD_UNIT'], { maxBuffer: 8 << 20 });
    return new Set(stdout.split('\n').map((s) => s.trim()).filter((s) => s !== ''));
  } catch {
    return new Set(); // no journal on this node: every service is read from its log file
  }
}

function runJournal(res: ServerResponse, args: readonly string[]): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn('journalctl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(res, { end: false });
    child.stderr.pipe(res, { end: false });
    res.once('close', () => child.kill());
    child.once('error', (err) => { res.write(`\nerror: journal output not available: ${err.message}\n`); resolve(); });
    child.once('close', () => { resolve(); });
  });
}

/** Answers a node log query on /logs/ (the path after /logs/ must be empty). */
export async function serveNodeLogQuery(res: ServerResponse, logDir: string, rel: string, q: NodeLogQuery, method: string): Promise<void> {
  if (rel !== '' && rel !== '/') throw new HttpError(406, 'path not allowed in query mode');
  const problems = validateNodeLogQuery(q);
  if (problems.length > 0) throw new HttpError(406, `[${problems.join(', ')}]`);
  const file = q.files[0];
  if (file !== undefined) {
    const { full, isDir } = await resolveLogPath(logDir, file.replace(/\\/g, '/').replace(/^\/+/, ''));
    if (isDir) throw new HttpError(406, `[${invalid('query', file, 'is a directory')}]`);
    await sendFile(res, full, method);
    return;
  }
  const units = await journalUnits();
  const native = q.services.filter((s) => units.has(s) || units.has(`${s}.service`));
  const fileLoggers = q.services.filter((s) => !native.includes(s));
  res.writeHead(200, { 'content-type': TEXT, 'x-content-type-options': 'nosniff' });
  if (native.length > 0) await runJournal(res, journalArgs(q, native));
  if (fileLoggers.length > 0 && (q.boot ?? 0) === 0) {
    for (const service of fileLoggers) {
      let served = false;
      for (const name of [service, `${service}.log`]) {
        const found = await resolveLogPath(logDir, name).catch(() => undefined); // not there: try the next name
        if (found === undefined || found.isDir) continue;
        for await (const chunk of createReadStream(found.full)) res.write(chunk as Buffer);
        served = true;
        break;
      }
      if (!served) res.write(`\nerror: no journal entries and no log file for service ${quoteValue(service)}\n`);
    }
  }
  res.end();
}
