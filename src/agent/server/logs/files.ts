/**
 * /logs/: the node's log directory (/var/log) served as upstream serves it with Go's file
 * server: a directory is an HTML listing (`<pre><a href="name">name</a>...</pre>`), a file is
 * its bytes, a directory without its trailing slash (or a file with one) is redirected, a path
 * with a `..` segment is a 400 "invalid URL path". Unlike Go's file server, a symbolic link
 * that leads out of the log directory is not followed (404).
 */
import { createReadStream } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { basename, extname, join, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { compareCodeUnits } from '../../../api/order.js';
import { HttpError, TEXT, notFound } from '../http.js';

const TYPES: Readonly<Record<string, string>> = {
  '.log': TEXT, '.txt': TEXT, '.json': 'application/json', '.gz': 'application/gzip', '.html': 'text/html; charset=utf-8',
  '.xml': 'text/xml; charset=utf-8', '.zst': 'application/zstd',
};

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;').replace(/'/g, '&#39;');
}

/** The file or directory `rel` (a path below the log directory) resolves to; HttpError when refused. */
export async function resolveLogPath(logDir: string, rel: string): Promise<{ full: string; isDir: boolean }> {
  if (rel.split(/[/\\]/).includes('..')) throw new HttpError(400, 'invalid URL path');
  const root = await realpath(logDir);
  let full: string;
  try {
    full = await realpath(join(root, rel));
  } catch {
    throw notFound(); // no such file
  }
  if (full !== root && !full.startsWith(root + sep)) throw notFound();
  const s = await stat(full);
  if (!s.isDirectory() && !s.isFile()) throw notFound();
  return { full, isDir: s.isDirectory() };
}

export async function listing(res: ServerResponse, dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  const lines = entries.sort((a, b) => compareCodeUnits(a.name, b.name)).map((e) => {
    const name = e.isDirectory() ? `${e.name}/` : e.name;
    return `<a href="${escapeHtml(encodeURI(name).replace(/[?#]/g, encodeURIComponent))}">${escapeHtml(name)}</a>`;
  });
  const body = Buffer.from(`<pre>\n${lines.map((l) => `${l}\n`).join('')}</pre>\n`);
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length }).end(body);
}

export async function sendFile(res: ServerResponse, full: string, method: string): Promise<void> {
  const s = await stat(full);
  res.writeHead(200, {
    'content-type': TYPES[extname(full)] ?? TEXT,
    'content-length': s.size,
    'last-modified': s.mtime.toUTCString(),
    'x-content-type-options': 'nosniff',
  });
  if (method === 'HEAD') {
    res.end();
    return;
  }
  await pipeline(createReadStream(full), res);
}

/** Serves `rel` (the path after /logs/) from `logDir`, as Go's file server does. */
export async function serveLogPath(res: ServerResponse, logDir: string, rel: string, method: string): Promise<void> {
  const { full, isDir } = await resolveLogPath(logDir, rel);
  const trailing = rel === '' || rel.endsWith('/');
  if (isDir && !trailing) {
    res.writeHead(301, { location: `${encodeURI(basename(rel))}/` }).end();
    return;
  }
  if (!isDir && trailing) {
    res.writeHead(301, { location: `../${encodeURI(basename(rel))}` }).end();
    return;
  }
  if (isDir) await listing(res, full);
  else await sendFile(res, full, method);
}
