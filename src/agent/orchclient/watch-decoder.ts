/**
 * The body of a watch: newline-delimited JSON objects `{"type": ..., "object": {...}}`, as our
 * server and upstream's send them. Chunks may split a line (or a multi-byte character)
 * anywhere; blank lines are skipped; a last line without its newline is decoded at the end.
 * A line that is not a watch event fails with ORCHCLIENT_WATCH_DECODE_FAILED.
 */
import { StringDecoder } from 'node:string_decoder';
import { OrchError, messageOf } from '../../api/errors.js';
import type { WatchEvent } from './rest-types.js';

export const ORCHCLIENT_WATCH_DECODE_FAILED = 'ORCHCLIENT_WATCH_DECODE_FAILED';

const TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

/** Beyond this, a line without a newline is not a watch event (16 MiB, the server's limit too). */
const MAX_LINE = 16 * 1024 * 1024;

/** Decodes one line; throws ORCHCLIENT_WATCH_DECODE_FAILED when it is not a watch event. */
export function parseWatchLine<T>(line: string, subject = 'watch'): WatchEvent<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (err) {
    throw new OrchError(ORCHCLIENT_WATCH_DECODE_FAILED, 'internal', `${subject}: a line of the watch is not JSON: ${messageOf(err)}`, { subject, cause: err });
  }
  const event = parsed as { type?: unknown; object?: unknown } | null;
  if (typeof event !== 'object' || event === null || typeof event.type !== 'string' || !TYPES.has(event.type)
    || typeof event.object !== 'object' || event.object === null) {
    throw new OrchError(ORCHCLIENT_WATCH_DECODE_FAILED, 'internal', `${subject}: not a watch event: ${line.slice(0, 200)}`, { subject });
  }
  return { type: event.type as WatchEvent['type'], object: event.object as T };
}

export interface WatchDecoder {
  /** Feeds a chunk; calls the decoder's onEvent for each complete line. Throws on a bad line. */
  push(chunk: Buffer | string): void;
  /** The end of the stream: decodes what is left. Throws on a bad last line. */
  end(): void;
}

export function createWatchDecoder<T>(onEvent: (event: WatchEvent<T>) => void, subject = 'watch'): WatchDecoder {
  const utf8 = new StringDecoder('utf8');
  let pending = '';

  function drain(): void {
    let start = 0;
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n', start)) {
      const line = pending.slice(start, nl).trim();
      start = nl + 1;
      if (line !== '') onEvent(parseWatchLine<T>(line, subject));
    }
    pending = pending.slice(start);
    if (pending.length > MAX_LINE) {
      throw new OrchError(ORCHCLIENT_WATCH_DECODE_FAILED, 'too-large', `${subject}: a watch line is longer than ${MAX_LINE} bytes`, { subject });
    }
  }

  return {
    push(chunk) {
      pending += typeof chunk === 'string' ? chunk : utf8.write(chunk);
      drain();
    },
    end() {
      pending += utf8.end();
      drain();
      const rest = pending.trim();
      pending = '';
      if (rest !== '') onEvent(parseWatchLine<T>(rest, subject));
    },
  };
}
