/** Typed query parameters; a value that does not parse is a 400 BadRequest naming the parameter. */
import { badRequest } from '../status/index.js';
import { quoteValue } from '../../api/quote.js';

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

export class Query {
  private readonly params: URLSearchParams;

  constructor(params: URLSearchParams) {
    this.params = params;
  }

  has(name: string): boolean {
    return this.params.has(name);
  }

  /** The last value of `name`, or undefined. */
  string(name: string): string | undefined {
    const all = this.params.getAll(name);
    return all.length === 0 ? undefined : all[all.length - 1];
  }

  all(name: string): string[] {
    return this.params.getAll(name);
  }

  /** Go's strconv.ParseBool values; absent or "" is `fallback`. */
  bool(name: string, fallback = false): boolean {
    const text = this.string(name);
    if (text === undefined || text === '') return fallback;
    if (TRUE.has(text)) return true;
    if (FALSE.has(text)) return false;
    throw badRequest(`invalid value for query parameter ${name}: ${quoteValue(text)} is not a boolean`);
  }

  /** A non-negative integer; absent or "" is undefined. */
  int(name: string): number | undefined {
    const text = this.string(name);
    if (text === undefined || text === '') return undefined;
    if (!/^[0-9]{1,15}$/.test(text)) throw badRequest(`invalid value for query parameter ${name}: ${quoteValue(text)} is not a non-negative integer`);
    return Number(text);
  }

  /** `dryRun`: absent is false; every value must be `All`. */
  dryRun(): boolean {
    const values = this.all('dryRun');
    for (const v of values) {
      if (v !== 'All') throw badRequest(`invalid value for query parameter dryRun: ${quoteValue(v)}: the only supported value is "All"`);
    }
    return values.length > 0;
  }

  /** A value from a fixed set; absent or "" is `fallback`. */
  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
    const text = this.string(name);
    if (text === undefined || text === '') return fallback;
    if (!(values as readonly string[]).includes(text)) {
      throw badRequest(`invalid value for query parameter ${name}: ${quoteValue(text)}: supported values: ${values.join(', ')}`);
    }
    return text as T;
  }
}
