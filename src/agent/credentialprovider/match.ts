/**
 * Upstream's image matching for credential providers (credentialprovider.URLsMatch): a pattern
 * and an image, both without scheme, match when their ports are equal, their hosts have as many
 * dot-separated parts and each host part matches its glob (`*`, `?`, `[...]` within one part),
 * and the pattern's path is a prefix of the image's path. Used for `matchImages` and for the
 * registries a plugin's response names. Pure.
 */

interface SchemelessUrl {
  readonly host: string;
  readonly port: string;
  readonly path: string;
}

/** Splits `host[:port]/path` as upstream's ParseSchemelessURL does (the path keeps its leading slash). */
function parseSchemeless(text: string): SchemelessUrl {
  const withoutScheme = text.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const slash = withoutScheme.indexOf('/');
  const hostPort = slash < 0 ? withoutScheme : withoutScheme.slice(0, slash);
  const path = slash < 0 ? '' : withoutScheme.slice(slash);
  const colon = hostPort.lastIndexOf(':');
  if (colon < 0 || hostPort.endsWith(']')) return { host: hostPort, port: '', path };
  return { host: hostPort.slice(0, colon), port: hostPort.slice(colon + 1), path };
}

/** A glob of one host part as a regular expression (Go's filepath.Match: `*` and `?` never match a separator; here there is none). */
function globPart(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i] ?? '';
    if (ch === '*') out += '.*';
    else if (ch === '?') out += '.';
    else if (ch === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) return /(?!)/; // a malformed class matches nothing, as filepath.Match reports ErrBadPattern
      const body = glob.slice(i + 1, end).replace(/^\^/, '!');
      out += body.startsWith('!') ? `[^${escapeClass(body.slice(1))}]` : `[${escapeClass(body)}]`;
      i = end;
    } else if (ch === '\\' && i + 1 < glob.length) {
      out += escapeLiteral(glob[++i] ?? '');
    } else out += escapeLiteral(ch);
  }
  return new RegExp(`^${out}$`);
}

function escapeLiteral(ch: string): string {
  return ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function escapeClass(body: string): string {
  return body.replace(/[\\\]^]/g, '\\$&');
}

/** Whether `image` (e.g. `registry.example:5000/team/app`) matches `pattern` (e.g. `*.example:5000/team`). */
export function imageMatches(pattern: string, image: string): boolean {
  const glob = parseSchemeless(pattern);
  const target = parseSchemeless(image);
  if (glob.port !== target.port) return false;
  const globParts = glob.host.split('.');
  const targetParts = target.host.split('.');
  if (globParts.length !== targetParts.length) return false;
  if (!target.path.startsWith(glob.path)) return false;
  return globParts.every((part, i) => globPart(part).test(targetParts[i] ?? ''));
}

/** The registry of an image (its first path component), as upstream's parseRegistry: the cache key of a Registry response. */
export function registryOf(image: string): string {
  return image.split('/')[0] ?? image;
}
