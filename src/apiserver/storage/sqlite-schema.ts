/**
 * The SQLite file of the embedded store: its schema and prepared statements.
 *
 * - `meta`: the durable counters `revision` (last write) and `compacted` (history discarded
 *   before it).
 * - `objects`: the current state, one row per key, with the revision of its last write and an
 *   optional expiry (epoch milliseconds).
 * - `changes`: the change log, one row per revision: the new value (NULL for a deletion) and the
 *   previous value and revision (NULL for a creation). It serves watches that start in the past,
 *   and reads at an older revision: the state at R is every object not written after R, plus
 *   the previous value of the first change after R of every key written after R.
 */
import type Database from 'better-sqlite3';

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO meta (name, value) VALUES ('revision', 0), ('compacted', 0);
CREATE TABLE IF NOT EXISTS objects (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  mod_rev INTEGER NOT NULL,
  expires_at INTEGER
);
CREATE INDEX IF NOT EXISTS objects_expiry ON objects (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS changes (
  rev INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  value TEXT,
  prev_value TEXT,
  prev_rev INTEGER,
  at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS changes_key ON changes (key, rev);
`;

export interface ObjectRow {
  readonly key: string;
  readonly value: string;
  readonly mod_rev: number;
}

export interface CurrentRow extends ObjectRow {
  readonly expires_at: number | null;
}

export interface ChangeRow {
  readonly rev: number;
  readonly key: string;
  readonly value: string | null;
  readonly prev_value: string | null;
}

/** The state at @rev of the keys in [@start, @end), as rows of (key, value, mod_rev). */
const AT_REVISION = `
  SELECT key, value, mod_rev FROM objects
   WHERE key >= @start AND key < @end AND mod_rev <= @rev
  UNION ALL
  SELECT c.key, c.prev_value AS value, c.prev_rev AS mod_rev FROM changes c
   WHERE c.rev > @rev AND c.key >= @start AND c.key < @end AND c.prev_value IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM changes d WHERE d.key = c.key AND d.rev > @rev AND d.rev < c.rev)`;

export function prepare(db: Database.Database) {
  return {
    readMeta: db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE name = ?'),
    writeMeta: db.prepare<[number, string]>('UPDATE meta SET value = ? WHERE name = ?'),
    getObject: db.prepare<[string], CurrentRow>('SELECT key, value, mod_rev, expires_at FROM objects WHERE key = ?'),
    upsertObject: db.prepare<[string, string, number, number | null]>(
      `INSERT INTO objects (key, value, mod_rev, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, mod_rev = excluded.mod_rev, expires_at = excluded.expires_at`,
    ),
    deleteObject: db.prepare<[string]>('DELETE FROM objects WHERE key = ?'),
    appendChange: db.prepare<[number, string, string | null, string | null, number | null, number]>(
      'INSERT INTO changes (rev, key, value, prev_value, prev_rev, at) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    rangeLatest: db.prepare<{ start: string; end: string; limit: number }, ObjectRow>(
      'SELECT key, value, mod_rev FROM objects WHERE key >= @start AND key < @end ORDER BY key LIMIT @limit',
    ),
    countLatest: db.prepare<{ start: string; end: string }, { n: number }>(
      'SELECT count(*) AS n FROM objects WHERE key >= @start AND key < @end',
    ),
    rangeAt: db.prepare<{ start: string; end: string; limit: number; rev: number }, ObjectRow>(
      `SELECT key, value, mod_rev FROM (${AT_REVISION}) ORDER BY key LIMIT @limit`,
    ),
    countAt: db.prepare<{ start: string; end: string; rev: number }, { n: number }>(
      `SELECT count(*) AS n FROM (${AT_REVISION})`,
    ),
    changesAfter: db.prepare<{ start: string; end: string; rev: number }, ChangeRow>(
      `SELECT rev, key, value, prev_value FROM changes
        WHERE rev > @rev AND key >= @start AND key < @end ORDER BY rev`,
    ),
    firstChangeSince: db.prepare<[number, number], { rev: number }>(
      'SELECT rev FROM changes WHERE rev > ? AND at >= ? ORDER BY rev LIMIT 1',
    ),
    compactChanges: db.prepare<[number]>('DELETE FROM changes WHERE rev <= ?'),
    expired: db.prepare<[number, number], ObjectRow>(
      'SELECT key, value, mod_rev FROM objects WHERE expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT ?',
    ),
  };
}

export type Statements = ReturnType<typeof prepare>;
