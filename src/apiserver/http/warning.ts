/**
 * The `Warning` response header of API warnings (upstream's warning recorder and
 * NewWarningHeader): code 299, agent `-`, each distinct text once as a quoted string. Header
 * values travel as bytes: the text is sent as UTF-8 (kubectl decodes it so), control
 * characters become spaces as Go's server writes them, so no text can break the response.
 */

/** `text` as an HTTP quoted-string whose characters are the UTF-8 bytes of the text. */
function quoted(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is replaced
  const escaped = text.replace(/[\u0000-\u001f\u007f]/g, ' ').replace(/["\\]/g, (c) => `\\${c}`);
  return `"${Buffer.from(escaped, 'utf8').toString('latin1')}"`;
}

/** The headers to send with `warnings` (none when there are none). */
export function warningHeaders(warnings: readonly string[]): Record<string, string> {
  const distinct = [...new Set(warnings.filter((w) => w !== ''))];
  return distinct.length === 0 ? {} : { Warning: distinct.map((w) => `299 - ${quoted(w)}`).join(', ') };
}
