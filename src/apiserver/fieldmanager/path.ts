/**
 * Path elements of field sets, as structured-merge-diff names them: a struct or map field
 * (`f:name`), an item of a map list by its key fields (`k:{"containerPort":80,"protocol":"TCP"}`),
 * an item of a set by its value (`v:"finalizer.example"`) and an item of an atomic list by its
 * index (`i:0`). Each element carries its `id`, the canonical text of its FieldsV1 key (key
 * fields sorted by name, values in Go's JSON), so that sets index children and members by id.
 */
export type PathElement =
  | { readonly kind: 'field'; readonly name: string; readonly id: string }
  | { readonly kind: 'key'; readonly fields: readonly (readonly [string, unknown])[]; readonly id: string }
  | { readonly kind: 'value'; readonly value: unknown; readonly id: string }
  | { readonly kind: 'index'; readonly index: number; readonly id: string };

export type Path = readonly PathElement[];

const GO_ESCAPED = /[<>&\u2028\u2029]/;

/** JSON as Go's encoder writes it: <, > and & and the line separators escaped. */
export function goJson(value: unknown): string {
  const text = JSON.stringify(value);
  // Most texts have none of them: testing is cheaper than a replace that allocates.
  if (!GO_ESCAPED.test(text)) return text;
  return text.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function fieldElement(name: string): PathElement {
  return { kind: 'field', name, id: `f:${name}` };
}

/**
 * Elements of single-field keys of scalars (a container by name, a condition by type) by field
 * and value: every write names the same few items, and building the id text each time was a
 * good part of a small write's cost. Bounded: emptied when full.
 */
const SINGLE_KEYS = new Map<string, Map<unknown, PathElement>>();
const SINGLE_KEYS_MAX = 50_000;
let singleKeys = 0;

export function keyElement(fields: readonly (readonly [string, unknown])[]): PathElement {
  const only = fields.length === 1 ? fields[0] : undefined;
  if (only !== undefined && (typeof only[1] === 'string' || typeof only[1] === 'number')) {
    let byValue = SINGLE_KEYS.get(only[0]);
    const found = byValue?.get(only[1]);
    if (found !== undefined) return found;
    const pe: PathElement = { kind: 'key', fields: [only], id: `k:{${goJson(only[0])}:${goJson(only[1])}}` };
    if (singleKeys >= SINGLE_KEYS_MAX) {
      SINGLE_KEYS.clear();
      singleKeys = 0;
    }
    if (byValue === undefined) {
      byValue = new Map();
      SINGLE_KEYS.set(only[0], byValue);
    }
    byValue.set(only[1], pe);
    singleKeys++;
    return pe;
  }
  const sorted = [...fields].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { kind: 'key', fields: sorted, id: `k:{${sorted.map(([k, v]) => `${goJson(k)}:${goJson(v)}`).join(',')}}` };
}

export function valueElement(value: unknown): PathElement {
  return { kind: 'value', value, id: `v:${goJson(value)}` };
}

export function indexElement(index: number): PathElement {
  return { kind: 'index', index, id: `i:${index}` };
}

/** Parsed FieldsV1 keys by their text: managedFields name the same elements on every write. Bounded. */
const PARSED = new Map<string, PathElement>();
const PARSED_MAX = 50_000;

/** The element a FieldsV1 key names; undefined for a kind this version does not know (skipped, as upstream). */
export function parseElement(text: string): PathElement | undefined {
  const known = PARSED.get(text);
  if (known !== undefined) return known;
  const pe = parseElementText(text);
  if (pe !== undefined) {
    if (PARSED.size >= PARSED_MAX) PARSED.clear();
    PARSED.set(text, pe);
  }
  return pe;
}

function parseElementText(text: string): PathElement | undefined {
  if (text.length < 2 || text[1] !== ':') throw new Error(`invalid path element ${JSON.stringify(text)}: missing colon`);
  const rest = text.slice(2);
  switch (text[0]) {
    case 'f':
      return fieldElement(rest);
    case 'k': {
      const parsed = JSON.parse(rest) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`invalid key element ${JSON.stringify(text)}: not a JSON object`);
      return keyElement(Object.entries(parsed));
    }
    case 'v':
      return valueElement(JSON.parse(rest) as unknown);
    case 'i': {
      if (!/^-?[0-9]+$/.test(rest)) throw new Error(`invalid index element ${JSON.stringify(text)}`);
      return indexElement(Number(rest));
    }
    default:
      return undefined;
  }
}

const KIND_ORDER = { field: 0, key: 1, value: 2, index: 3 } as const;

function typeRank(v: unknown): number {
  if (typeof v === 'number') return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (v !== null && typeof v === 'object') return 4;
  return 5;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** structured-merge-diff's order of values: numbers, strings, booleans, lists, maps, null. */
export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return compareText(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compareValues(a[i], b[i]);
      if (c !== 0) return c;
    }
    return a.length - b.length;
  }
  if (ra === 4) {
    const ea: [string, unknown][] = Object.entries(a as Record<string, unknown>).sort((x, y) => compareText(x[0], y[0]));
    const eb: [string, unknown][] = Object.entries(b as Record<string, unknown>).sort((x, y) => compareText(x[0], y[0]));
    for (let i = 0; i < Math.min(ea.length, eb.length); i++) {
      const [ka, va] = ea[i] ?? ['', null];
      const [kb, vb] = eb[i] ?? ['', null];
      const c = compareText(ka, kb) || compareValues(va, vb);
      if (c !== 0) return c;
    }
    return ea.length - eb.length;
  }
  return 0;
}

/** structured-merge-diff's order of path elements: fields, keys, values, indexes, each sorted. */
export function compareElements(a: PathElement, b: PathElement): number {
  if (a.kind !== b.kind) return KIND_ORDER[a.kind] - KIND_ORDER[b.kind];
  switch (a.kind) {
    case 'field':
      return compareText(a.name, (b as typeof a).name);
    case 'key': {
      const other = (b as typeof a).fields;
      for (let i = 0; i < Math.min(a.fields.length, other.length); i++) {
        const [ka, va] = a.fields[i] ?? ['', null];
        const [kb, vb] = other[i] ?? ['', null];
        const c = compareText(ka, kb) || compareValues(va, vb);
        if (c !== 0) return c;
      }
      return a.fields.length - other.length;
    }
    case 'value':
      return compareValues(a.value, (b as typeof a).value);
    case 'index':
      return a.index - (b as typeof a).index;
  }
}

function valueText(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(valueText).join(',')}]`;
  if (typeof v === 'object') return Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}=${valueText(x)}`).join('');
  return typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
}

/** The element as upstream prints it in conflicts: `.name`, `[name="a",x=1]`, `[="v"]`, `[0]`. */
export function elementText(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `.${pe.name}`;
    case 'key':
      return `[${pe.fields.map(([k, v]) => `${k}=${valueText(v)}`).join(',')}]`;
    case 'value':
      return `[=${valueText(pe.value)}]`;
    case 'index':
      return `[${pe.index}]`;
  }
}

export function pathText(path: Path): string {
  return path.map(elementText).join('');
}
