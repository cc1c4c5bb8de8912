/**
 * Quoting a value inside a log line or an error message. A value comes from outside (a
 * manifest, a request, a configuration file) and may be megabytes long; a message repeats at
 * most QUOTE_LIMIT characters of it, then says how many it left out, so one bad file or request
 * makes a line of bounded size.
 */

/** The characters of a value a message repeats. */
export const QUOTE_LIMIT = 200;

/** `text` cut to `limit` characters, with "... (N more)" when cut. */
export function truncateText(text: string, limit = QUOTE_LIMIT): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}... (${text.length - limit} more)`;
}

/**
 * A value as a message shows it: a string JSON-quoted (so spaces and control characters are
 * visible), anything else as JSON; either cut to `limit` characters.
 */
export function quoteValue(value: unknown, limit = QUOTE_LIMIT): string {
  if (typeof value === 'string') {
    if (value.length <= limit) return JSON.stringify(value);
    return `${JSON.stringify(value.slice(0, limit))}... (${value.length - limit} more)`;
  }
  let text: string;
  try {
    // JSON.stringify gives undefined for undefined, functions and symbols.
    const json = JSON.stringify(value) as unknown;
    text = typeof json === 'string' ? json : String(value);
  } catch {
    // A cycle or a BigInt: the plain string form still says what the value is.
    text = String(value);
  }
  return truncateText(text, limit);
}
