/**
 * Decoding of the unfiltered list responses (ListPodSandbox, ListContainers) that reuses what
 * the previous response of the same call decoded. Both responses hold one repeated message
 * field (number 1) and nothing else; the PLEG and housekeeping fetch them every second or
 * two, and from one response to the next almost every element is byte for byte the same
 * (the runtime encodes an unchanged sandbox or container identically, whatever the order).
 * So each element is decoded only when its bytes were not in the previous response; the
 * others are the objects decoded then (the CRI types are read-only: nobody mutates them).
 * The runtime writes the entries of a map field (labels, annotations) in any order, so an
 * element is known by its fields sorted (`canonicalKey`): Container and PodSandbox have no
 * repeated field other than maps, whose order means nothing.
 *
 * Anything unexpected in the wire format (another field, a malformed length) falls back to
 * decoding the whole response as usual.
 */

/** Field 1, wire type 2 (length-delimited): the repeated element's tag byte. */
const ELEMENT_TAG = 0x0a;

/**
 * Reads a base-128 varint at `pos` (up to 10 bytes: 64-bit values, exact up to 2^53, enough
 * for lengths and tags); undefined when the buffer ends first or it is longer.
 */
function readVarint(buf: Buffer, pos: number): { value: number; next: number } | undefined {
  let value = 0;
  let shift = 1;
  for (let i = pos; i < buf.length && i < pos + 10; i++) {
    const byte = buf[i] ?? 0;
    value += (byte & 0x7f) * shift;
    if (byte < 0x80) return { value, next: i + 1 };
    shift *= 128;
  }
  return undefined;
}

/** Skips one field's payload of the given wire type at `pos`; undefined when malformed. */
function skipPayload(buf: Buffer, pos: number, wireType: number, end: number): number | undefined {
  let next: number | undefined;
  if (wireType === 0) next = readVarint(buf, pos)?.next;
  else if (wireType === 1) next = pos + 8;
  else if (wireType === 5) next = pos + 4;
  else if (wireType === 2) {
    const length = readVarint(buf, pos);
    next = length === undefined ? undefined : length.next + length.value;
  }
  return next === undefined || next > end ? undefined : next;
}

/** The element's fields (each with its tag) sorted and joined; undefined when malformed. */
function canonicalKey(buf: Buffer, start: number, end: number): string | undefined {
  const fields: string[] = [];
  let pos = start;
  while (pos < end) {
    const tag = readVarint(buf, pos);
    if (tag === undefined) return undefined;
    const next = skipPayload(buf, tag.next, tag.value & 7, end);
    if (next === undefined) return undefined;
    fields.push(buf.toString('latin1', pos, next));
    pos = next;
  }
  return fields.sort().join('');
}

/**
 * A response deserializer for one list call: `decode` is the call's usual deserializer and
 * `field` the name of the repeated field in what it returns (`items`, `containers`).
 */
export function cachingListDeserializer(decode: (buf: Buffer) => unknown, field: string): (buf: Buffer) => unknown {
  let previous = new Map<string, unknown>();
  return (buf: Buffer): unknown => {
    const current = new Map<string, unknown>();
    const items: unknown[] = [];
    let pos = 0;
    while (pos < buf.length) {
      const length = buf[pos] === ELEMENT_TAG ? readVarint(buf, pos + 1) : undefined;
      const end = length === undefined ? Infinity : length.next + length.value;
      if (length === undefined || end > buf.length) return decode(buf);
      const key = canonicalKey(buf, length.next, end);
      if (key === undefined) return decode(buf);
      let item = current.get(key) ?? previous.get(key);
      if (item === undefined) {
        // The bytes from the tag to the element's end are a response holding just that element.
        const one = decode(buf.subarray(pos, end)) as Record<string, unknown>;
        const list = one[field];
        if (!Array.isArray(list) || list.length !== 1) return decode(buf);
        item = list[0] as unknown;
      }
      current.set(key, item);
      items.push(item);
      pos = end;
    }
    previous = current;
    return { [field]: items };
  };
}
