/**
 * Decoding of the unfiltered list responses (ListPodSandbox, ListContainers) that reuses what
 * the previous response of the same call decoded. Both responses hold one repeated message
 * field (number 1) and nothing else; the PLEG and housekeeping fetch them every second or
 * two, and from one response to the next almost every element is the same. So each element
 * is decoded only when it was not in the previous response; the others are the objects
 * decoded then (the CRI types are read-only: nobody mutates them).
 *
 * With 110 pods idle it takes the agent from about 1.0 % to 0.6 % of a core
 * (bench/experiments/idle-pair.ts, this file against plain decoding).
 *
 * An element is known by its id, its state and its length, read from the wire without decoding
 * it: everything else of a listed sandbox or container is fixed once it exists. The CRI has no
 * call that changes a sandbox's or container's metadata, labels, annotations, image, sandbox or
 * creation time (UpdateContainerResources changes resources, which a list does not show), and
 * the CRI behaviour suite checks on containerd that a listed object's fields stay the same
 * through its life but for its state. Keying on every field instead costs about ten times as
 * much per relist (hashing all the bytes, in any order, since containerd writes the entries of
 * a map field in a random order each time): the state is what changes. The key is two 32-bit
 * hashes of the id's bytes mixed with the state and the length, as one number below 2^53;
 * working it out reads only the id's bytes of each element.
 *
 * Two different elements taken for one another would need both 32-bit hashes and the length to
 * agree (about one chance in 2^53 per changed element); two elements of one response with the
 * same key (the same container twice cannot happen) make that response decoded as usual.
 *
 * Anything unexpected in the wire format (another field, a malformed length) falls back to
 * decoding the whole response as usual.
 */

/** Field 1, wire type 2 (length-delimited): the repeated element's tag byte. */
const ELEMENT_TAG = 0x0a;

/** Field 1 (the id), wire type 2: its tag. */
const ID_TAG = 0x0a;

/** murmur3's finalizer: every input bit moves every output bit. */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Reads the wire format of one response; the last varint read is a field, so that reading allocates nothing. */
class WireReader {
  /** The value of the last varint read by `varintEnd`. */
  value = 0;

  constructor(private readonly buf: Buffer) {}

  /**
   * Reads a base-128 varint at `pos` (up to 10 bytes: 64-bit values, exact up to 2^53, enough
   * for lengths and tags) into `value`; its end, or -1 when `limit` comes first or it is longer.
   */
  varintEnd(pos: number, limit: number): number {
    const buf = this.buf;
    let value = 0;
    let shift = 1;
    for (let i = pos; i < limit && i < pos + 10; i++) {
      const byte = buf[i] ?? 0;
      value += (byte & 0x7f) * shift;
      if (byte < 0x80) {
        this.value = value;
        return i + 1;
      }
      shift *= 128;
    }
    return -1;
  }

  /** The end of one field's payload of the given wire type at `pos`; -1 when malformed. */
  payloadEnd(pos: number, wireType: number, end: number): number {
    let next: number;
    if (wireType === 0) next = this.varintEnd(pos, end);
    else if (wireType === 1) next = pos + 8;
    else if (wireType === 5) next = pos + 4;
    else if (wireType === 2) {
      const lengthEnd = this.varintEnd(pos, end);
      next = lengthEnd < 0 ? -1 : lengthEnd + this.value;
    } else next = -1;
    return next > end ? -1 : next;
  }

  /**
   * The element's key from its id (field 1), its state (the varint field `stateField`) and its
   * length, as one number below 2^53; -1 when malformed or without an id.
   */
  elementKey(start: number, end: number, stateField: number): number {
    const buf = this.buf;
    const stateTag = stateField * 8; // wire type 0
    let a = 0x811c9dc5; // FNV-1a
    let b = 0x2545f491;
    let state = 0;
    let hasId = false;
    let pos = start;
    while (pos < end) {
      const tagEnd = this.varintEnd(pos, end);
      if (tagEnd < 0) return -1;
      const tag = this.value;
      const next = this.payloadEnd(tagEnd, tag & 7, end);
      if (next < 0) return -1;
      if (tag === ID_TAG) {
        hasId = true;
        for (let i = tagEnd; i < next; i++) {
          const byte = buf[i] ?? 0;
          a = Math.imul(a ^ byte, 0x01000193);
          b = Math.imul(b + byte, 0x9e3779b1) ^ (b >>> 15);
        }
      } else if (tag === stateTag) {
        this.varintEnd(tagEnd, next);
        state = this.value;
      }
      pos = next;
    }
    if (!hasId) return -1;
    const high = mix(a ^ Math.imul(state + 1, 0x27d4eb2f));
    const low = mix(b ^ (end - start)) >>> 11;
    return high * 0x200000 + low;
  }
}

/**
 * A response deserializer for one list call: `decode` is the call's usual deserializer, `field`
 * the name of the repeated field in what it returns (`items`, `containers`) and `stateField`
 * the number of its elements' state field (PodSandbox 3, Container 6). Each deserializer keeps
 * the elements of its own previous response.
 */
export function cachingListDeserializer(decode: (buf: Buffer) => unknown, field: string, stateField: number): (buf: Buffer) => unknown {
  let previous = new Map<number, unknown>();
  return (buf: Buffer): unknown => {
    const reader = new WireReader(buf);
    const current = new Map<number, unknown>();
    const items: unknown[] = [];
    let pos = 0;
    while (pos < buf.length) {
      const lengthEnd = buf[pos] === ELEMENT_TAG ? reader.varintEnd(pos + 1, buf.length) : -1;
      const end = lengthEnd < 0 ? Infinity : lengthEnd + reader.value;
      if (end > buf.length) return decode(buf);
      const key = reader.elementKey(lengthEnd, end, stateField);
      if (key < 0 || current.has(key)) return decode(buf);
      let item = previous.get(key);
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
