/**
 * The text upstream's checkpoints hash for their checksum: Go's spew printer with `%#v`, sorted
 * map keys and methods off (the kubelet's hashutil.DeepHashObject), for the few Go shapes the
 * resource managers' checkpoints have. A value is described with its Go type name, since the
 * printed text carries them:
 *
 *   (*state.CPUManagerCheckpoint){PolicyName:(string)static DefaultCPUSet:(string)0-1
 *     Entries:(map[string]map[string]string)map[pod:map[c:1]] Checksum:(checksum.Checksum)0}
 *
 * spew's rules kept here: a type is printed in parentheses before a value unless the value is a
 * map key, map value, slice element or the target of a pointer already typed; a pointer inside
 * a map or slice prints `<*>`; struct fields print `Name:value` separated by spaces; maps print
 * `map[k:v k:v]` with keys sorted (numbers numerically); a nil slice or map prints `<nil>`
 * (entries null), an empty one `[]` or `map[]`.
 */

export type GoValue =
  | { readonly kind: 'string'; readonly type: string; readonly value: string }
  | { readonly kind: 'int'; readonly type: string; readonly value: number | bigint }
  | { readonly kind: 'ptr'; readonly type: string; readonly elem: GoValue }
  | { readonly kind: 'struct'; readonly type: string; readonly fields: readonly (readonly [string, GoValue])[] }
  | { readonly kind: 'map'; readonly type: string; readonly entries: readonly (readonly [GoValue, GoValue])[] | null }
  | { readonly kind: 'slice'; readonly type: string; readonly items: readonly GoValue[] | null };

export const goString = (value: string, type = 'string'): GoValue => ({ kind: 'string', type, value });
export const goInt = (value: number | bigint, type: string): GoValue => ({ kind: 'int', type, value });

function keyOrder(a: GoValue, b: GoValue): number {
  if (a.kind === 'int' && b.kind === 'int') return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
  const x = a.kind === 'string' ? a.value : '';
  const y = b.kind === 'string' ? b.value : '';
  return x < y ? -1 : x > y ? 1 : 0;
}

function print(v: GoValue, typed: boolean, out: string[]): void {
  if (v.kind === 'ptr') {
    out.push(typed ? `(${v.type})` : '<*>');
    print(v.elem, false, out);
    return;
  }
  if (typed) out.push(`(${v.type})`);
  switch (v.kind) {
    case 'string':
      out.push(v.value);
      return;
    case 'int':
      out.push(String(v.value));
      return;
    case 'slice':
      if (v.items === null) {
        out.push('<nil>');
        return;
      }
      out.push('[');
      v.items.forEach((item, i) => {
        if (i > 0) out.push(' ');
        print(item, false, out);
      });
      out.push(']');
      return;
    case 'map':
      if (v.entries === null) {
        out.push('<nil>');
        return;
      }
      out.push('map[');
      [...v.entries].sort((a, b) => keyOrder(a[0], b[0])).forEach(([key, value], i) => {
        if (i > 0) out.push(' ');
        print(key, false, out);
        out.push(':');
        print(value, false, out);
      });
      out.push(']');
      return;
    case 'struct':
      out.push('{');
      v.fields.forEach(([name, value], i) => {
        if (i > 0) out.push(' ');
        out.push(`${name}:`);
        print(value, true, out);
      });
      out.push('}');
      return;
  }
}

/** spew's `%#v` of `v` (a top-level value prints its type). */
export function goDump(v: GoValue): string {
  const out: string[] = [];
  print(v, true, out);
  return out.join('');
}

/** FNV-1a, 32 bits, of the UTF-8 bytes of `text` (Go's hash/fnv New32a). */
export function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}
