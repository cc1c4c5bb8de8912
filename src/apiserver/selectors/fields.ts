/**
 * Field selectors in the text form of the `fieldSelector` query parameter: `f=v`, `f==v`, `f!=v`
 * joined by commas, with `\,`, `\=` and `\\` escapes in values. Each resource says which field
 * labels it supports (metadata.name and metadata.namespace always); any other throws a 400.
 */
import { badRequest } from '../status/index.js';
import { quoteValue } from '../../api/quote.js';

export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  readonly empty: boolean;
  matches(fields: Readonly<Record<string, string>>): boolean;
  /** The value required by `field=value`, if the selector has one (used to narrow a list). */
  exact(field: string): string | undefined;
}

/** Splits on unescaped commas, keeping escapes for the second pass. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (c === '\\' && i + 1 < text.length) {
      current += c + (text[i + 1] ?? '');
      i++;
    } else if (c === ',') {
      terms.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  terms.push(current);
  return terms;
}

function unescape(value: string, selector: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i] ?? '';
    if (c !== '\\') {
      if (c === '=' || c === ',') throw badRequest(`invalid field selector ${quoteValue(selector)}: unescaped '${c}' in a value`);
      out += c;
      continue;
    }
    const next = value[i + 1];
    if (next !== '\\' && next !== ',' && next !== '=') {
      throw badRequest(`invalid field selector ${quoteValue(selector)}: invalid escape sequence in ${quoteValue(value)}`);
    }
    out += next;
    i++;
  }
  return out;
}

function parseTerm(term: string, selector: string): FieldRequirement {
  const ops: { text: string; operator: '=' | '!=' }[] = [
    { text: '!=', operator: '!=' },
    { text: '==', operator: '=' },
    { text: '=', operator: '=' },
  ];
  let best: { index: number; text: string; operator: '=' | '!=' } | undefined;
  for (const op of ops) {
    const index = term.indexOf(op.text);
    if (index >= 0 && (best === undefined || index < best.index)) best = { index, ...op };
  }
  if (best === undefined) throw badRequest(`invalid field selector ${quoteValue(selector)}: ${quoteValue(term)} is not field=value or field!=value`);
  const field = term.slice(0, best.index).trim();
  if (field === '') throw badRequest(`invalid field selector ${quoteValue(selector)}: empty field name`);
  return { field, operator: best.operator, value: unescape(term.slice(best.index + best.text.length), selector) };
}

/**
 * Parses a `fieldSelector`; "" selects everything. `supported` lists the field labels of the
 * resource (without metadata.name/namespace); `what` names the resource in the error.
 */
export function parseFieldSelector(text: string, supported: readonly string[], what: string): FieldSelector {
  const requirements = text.trim() === '' ? [] : splitTerms(text).map((t) => parseTerm(t, text));
  for (const r of requirements) {
    if (r.field !== 'metadata.name' && r.field !== 'metadata.namespace' && !supported.includes(r.field)) {
      throw badRequest(`field label not supported: ${r.field} (for ${what}; supported: metadata.name, metadata.namespace${supported.map((s) => `, ${s}`).join('')})`);
    }
  }
  return {
    requirements,
    empty: requirements.length === 0,
    matches: (fields) => requirements.every((r) => ((fields[r.field] ?? '') === r.value) === (r.operator === '=')),
    exact: (field) => requirements.find((r) => r.field === field && r.operator === '=')?.value,
  };
}
