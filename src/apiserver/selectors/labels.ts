/**
 * Label selectors in the text form of the `labelSelector` query parameter:
 * `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x,y)`, `a` (exists), `!a` (does not exist),
 * `a>3`, `a<3` (integer values), joined by commas (AND). Keys follow the qualified-name rule and
 * values the label-value rule; a syntax error throws a 400 BadRequest StatusError.
 */
import { validateLabelValue, validateQualifiedName } from '../../api/labels.js';
import { badRequest } from '../status/index.js';
import { quoteValue } from '../../api/quote.js';

export type LabelOperator = 'exists' | '!' | '=' | '!=' | 'in' | 'notin' | '>' | '<';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  /** True when every object matches (the empty selector). */
  readonly empty: boolean;
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
}

type Token = { kind: 'word'; text: string } | { kind: 'op'; text: string };

const OPERATORS = ['==', '!=', '=', '!', '(', ')', ',', '>', '<'];

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] ?? '';
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (op !== undefined) {
      tokens.push({ kind: 'op', text: op });
      i += op.length;
      continue;
    }
    let j = i;
    while (j < text.length && !' \t'.includes(text[j] ?? '') && OPERATORS.every((o) => !text.startsWith(o, j))) j++;
    tokens.push({ kind: 'word', text: text.slice(i, j) });
    i = j;
  }
  return tokens;
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[], private readonly text: string) {}

  parse(): LabelRequirement[] {
    const out: LabelRequirement[] = [];
    if (this.tokens.length === 0) return out;
    for (;;) {
      out.push(this.requirement());
      const next = this.take();
      if (next === undefined) return out;
      if (next.text !== ',' || next.kind !== 'op') this.fail(`expected ',' but found ${quoteValue(next.text)}`);
    }
  }

  private requirement(): LabelRequirement {
    const first = this.take();
    if (first === undefined) this.fail('expected a key');
    if (first.kind === 'op' && first.text === '!') {
      const key = this.word('a key after !');
      return this.checked({ key, operator: '!', values: [] });
    }
    if (first.kind !== 'word') this.fail(`expected a key but found ${quoteValue(first.text)}`);
    const key = first.text;
    const op = this.peek();
    if (op === undefined || (op.kind === 'op' && op.text === ',')) return this.checked({ key, operator: 'exists', values: [] });
    this.pos++;
    if (op.kind === 'word' && (op.text === 'in' || op.text === 'notin')) {
      return this.checked({ key, operator: op.text, values: this.valueSet() });
    }
    if (op.kind === 'op' && ['=', '==', '!=', '>', '<'].includes(op.text)) {
      const value = this.peek()?.kind === 'word' ? this.word('a value') : '';
      const operator: LabelOperator = op.text === '==' ? '=' : (op.text as LabelOperator);
      return this.checked({ key, operator, values: [value] });
    }
    return this.fail(`expected an operator after ${quoteValue(key)} but found ${quoteValue(op.text)}`);
  }

  private valueSet(): string[] {
    const open = this.take();
    if (open?.text !== '(') this.fail("expected '(' after in/notin");
    const values: string[] = [];
    for (;;) {
      const t = this.peek();
      if (t?.kind === 'word') {
        values.push(t.text);
        this.pos++;
      } else {
        values.push('');
      }
      const sep = this.take();
      if (sep?.text === ')') return values;
      if (sep?.text !== ',') this.fail("expected ',' or ')' in a value set");
    }
  }

  private checked(r: LabelRequirement): LabelRequirement {
    const keyProblems = validateQualifiedName(r.key);
    if (keyProblems.length > 0) this.fail(`invalid label key ${quoteValue(r.key)}: ${keyProblems.join('; ')}`);
    for (const v of r.values) {
      if (r.operator === '>' || r.operator === '<') {
        if (!/^-?\d+$/.test(v)) this.fail(`for '${r.operator}' the value must be an integer, not ${quoteValue(v)}`);
        continue;
      }
      const problems = validateLabelValue(v);
      if (problems.length > 0) this.fail(`invalid label value ${quoteValue(v)}: ${problems.join('; ')}`);
    }
    return r;
  }

  private word(what: string): string {
    const t = this.take();
    if (t?.kind !== 'word') this.fail(`expected ${what}`);
    return t.text;
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private take(): Token | undefined {
    const t = this.tokens[this.pos];
    this.pos++;
    return t;
  }

  private fail(why: string): never {
    throw badRequest(`unable to parse requirement: label selector ${quoteValue(this.text)}: ${why}`);
  }
}

function matchOne(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'exists':
      return has;
    case '!':
      return !has;
    case '=':
    case 'in':
      return has && r.values.includes(value ?? '');
    case '!=':
    case 'notin':
      return !has || !r.values.includes(value ?? '');
    case '>':
    case '<': {
      if (!has || !/^-?\d+$/.test(value ?? '')) return false;
      const n = Number(value);
      const bound = Number(r.values[0]);
      return r.operator === '>' ? n > bound : n < bound;
    }
  }
}

/** Parses a `labelSelector`; "" selects everything. Throws 400 BadRequest. */
export function parseLabelSelector(text: string): LabelSelector {
  const requirements = new Parser(tokenize(text), text).parse();
  return {
    requirements,
    empty: requirements.length === 0,
    matches: (labels) => requirements.every((r) => matchOne(r, labels ?? {})),
  };
}
