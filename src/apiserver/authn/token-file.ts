/**
 * The static token file of --token-auth-file: CSV lines `token,user,uid,"group1,group2"` (the
 * groups column is optional; quotes allow commas inside a field). The table is keyed by each
 * token's SHA-256 digest: a bearer token is found with one hash and one map lookup, whatever the
 * file's size (upstream's tokenfile authenticator looks the token up in a map too), and the
 * lookup's timing depends on the digest, not on the secret's bytes; the entry found is then
 * compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { OrchError } from '../../api/errors.js';

export interface TokenEntry {
  readonly token: string;
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
}

/** Entries by the SHA-256 digest of their token (base64). */
export type TokenTable = ReadonlyMap<string, TokenEntry>;

function digestOf(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64');
}

/** Splits one CSV line (RFC 4180 quoting: `"a,b"` and `""` for a quote). */
function csvFields(line: string): string[] {
  const fields: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] ?? '';
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        current += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
      } else {
        current += c;
      }
    } else if (c === '"') {
      quoted = true;
    } else if (c === ',') {
      fields.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  if (quoted) throw new Error('unterminated quote');
  fields.push(current);
  return fields;
}

/** Parses the file's text; throws OrchError APISERVER_TOKEN_FILE_INVALID naming the line. */
export function parseTokenFile(text: string, file: string): TokenTable {
  const table = new Map<string, TokenEntry>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const fail = (why: string): never => {
      throw new OrchError('APISERVER_TOKEN_FILE_INVALID', 'invalid', `--token-auth-file ${file}: line ${index + 1}: ${why}`, { subject: file });
    };
    let fields: string[] = [];
    try {
      fields = csvFields(line);
    } catch (err) {
      fail(err instanceof Error ? err.message : String(err));
    }
    const [token = '', name = '', uid = '', groups = ''] = fields.map((f) => f.trim());
    if (fields.length < 3) fail('want at least 3 columns: token,user,uid[,"group1,group2"]');
    if (token === '') fail('empty token');
    if (name === '') fail('empty user name');
    const key = digestOf(token);
    if (table.has(key)) fail('duplicate token');
    table.set(key, { token, name, uid, groups: groups === '' ? [] : groups.split(',').map((g) => g.trim()).filter((g) => g !== '') });
  });
  return table;
}

export function loadTokenFile(file: string): TokenTable {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new OrchError('APISERVER_TOKEN_FILE_UNREADABLE', 'invalid', `--token-auth-file: cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`, { subject: file, cause: err });
  }
  return parseTokenFile(text, file);
}

export type TokenResult = { kind: 'user'; user: { name: string; uid: string; groups: readonly string[] } } | { kind: 'invalid'; reason: string };

/** The entry of `token`, if the table has it (one digest and one lookup). */
export function tokenEntry(table: TokenTable | undefined, token: string): TokenEntry | undefined {
  const entry = table?.get(digestOf(token));
  if (entry === undefined) return undefined;
  const given = Buffer.from(token, 'utf8');
  const known = Buffer.from(entry.token, 'utf8');
  return known.length === given.length && timingSafeEqual(known, given) ? entry : undefined;
}

/** Authenticates an Authorization header value against the table. */
export function authenticateToken(header: string, table: TokenTable | undefined): TokenResult {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match === null) return { kind: 'invalid', reason: 'the Authorization header is not "Bearer <token>"' };
  const entry = tokenEntry(table, match[1] ?? '');
  if (entry !== undefined) return { kind: 'user', user: { name: entry.name, uid: entry.uid, groups: entry.groups } };
  return { kind: 'invalid', reason: 'invalid bearer token' };
}
