/**
 * NUMA affinity masks (upstream: topologymanager/bitmask): a mask is a number whose bit N is
 * NUMA node N. The topology manager refuses machines with more than 8 NUMA nodes (as upstream),
 * and masks stay far below 2^53 either way.
 */
export type BitMask = number;

export function maskOf(...bits: readonly number[]): BitMask {
  let mask = 0;
  for (const bit of new Set(bits)) mask += 2 ** bit;
  return mask;
}

/** The set bits, lowest first. */
export function bitsOf(mask: BitMask): number[] {
  const bits: number[] = [];
  for (let bit = 0, rest = mask; rest > 0; bit++, rest = Math.floor(rest / 2)) if (rest % 2 === 1) bits.push(bit);
  return bits;
}

export function countOf(mask: BitMask): number {
  return bitsOf(mask).length;
}

export function isSet(mask: BitMask, bit: number): boolean {
  return Math.floor(mask / 2 ** bit) % 2 === 1;
}

/** The bits set in every mask. */
export function and(first: BitMask, ...rest: readonly BitMask[]): BitMask {
  const common = bitsOf(first).filter((bit) => rest.every((m) => isSet(m, bit)));
  return maskOf(...common);
}

/** Fewer bits set, or as many with the lower value (more lower-numbered nodes). */
export function isNarrowerThan(a: BitMask, b: BitMask): boolean {
  const ca = countOf(a);
  const cb = countOf(b);
  return ca === cb ? a < b : ca < cb;
}

/** Calls `callback` with every non-empty combination of `bits`: all of size 1 first, then 2, ... (upstream IterateBitMasks). */
export function iterateBitMasks(bits: readonly number[], callback: (mask: BitMask) => void): void {
  const iterate = (rest: readonly number[], accum: readonly number[], size: number): void => {
    if (accum.length === size) {
      callback(maskOf(...accum));
      return;
    }
    rest.forEach((bit, i) => { iterate(rest.slice(i + 1), [...accum, bit], size); });
  };
  for (let size = 1; size <= bits.length; size++) iterate(bits, [], size);
}

/** `0,2` for nodes 0 and 2 (for logs and messages). */
export function formatMask(mask: BitMask | undefined): string {
  return mask === undefined ? '<nil>' : bitsOf(mask).join(',');
}
