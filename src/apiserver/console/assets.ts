/**
 * The console's assets, read once from the build output: each file's bytes, its gzip form, a
 * content type from a fixed list of extensions and a strong ETag. Test files, source maps and
 * anything else the build leaves beside them are not served.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { OrchError, messageOf } from '../../api/errors.js';

/** Where `npm run build` puts the page: web/ beside this module's compiled file. */
export const CONSOLE_ASSETS_DIR = fileURLToPath(new URL('./web/', import.meta.url));

export interface ConsoleAsset {
  /** The path under /console/, e.g. `main.js`, `views/pods.js`. */
  readonly name: string;
  readonly contentType: string;
  readonly body: Buffer;
  /** Undefined when compressing does not make the file smaller. */
  readonly gzip: Buffer | undefined;
  readonly etag: string;
}

export interface ConsoleAssets {
  /** The asset at `name` (no leading slash), or undefined. */
  get(name: string): ConsoleAsset | undefined;
  /** Every asset, for measuring the page. */
  all(): readonly ConsoleAsset[];
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

function contentTypeOf(name: string): string | undefined {
  // The tests of the page's modules and their fakes are built beside them, never served.
  if (name.endsWith('.test.js') || name === 'testing.js' || name.endsWith('/testing.js')) return undefined;
  const dot = name.lastIndexOf('.');
  return dot < 0 ? undefined : CONTENT_TYPES[name.slice(dot)];
}

function filesUnder(dir: string, prefix: string): string[] {
  return readdirSync(dir).sort().flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? filesUnder(path, `${prefix}${entry}/`) : [`${prefix}${entry}`];
  });
}

/**
 * Reads every asset under `dir` (default: the build output). Throws APISERVER_CONSOLE_ASSETS,
 * naming the directory, when it cannot be read or holds no index.html (the package was not
 * built).
 */
export function loadConsoleAssets(dir: string = CONSOLE_ASSETS_DIR): ConsoleAssets {
  const assets = new Map<string, ConsoleAsset>();
  try {
    for (const name of filesUnder(dir, '')) {
      const contentType = contentTypeOf(name);
      if (contentType === undefined) continue;
      const body = readFileSync(join(dir, name));
      const gzip = gzipSync(body, { level: 9 });
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      assets.set(name, { name, contentType, body, gzip: gzip.length < body.length ? gzip : undefined, etag });
    }
  } catch (err) {
    throw new OrchError('APISERVER_CONSOLE_ASSETS', 'unavailable', `the console's assets cannot be read from ${dir}: ${messageOf(err)} (run npm run build)`, { subject: dir, cause: err });
  }
  if (!assets.has('index.html')) {
    throw new OrchError('APISERVER_CONSOLE_ASSETS', 'unavailable', `the console's assets in ${dir} have no index.html (run npm run build)`, { subject: dir });
  }
  return { get: (name) => assets.get(name), all: () => [...assets.values()] };
}
