/**
 * A set of logical CPU (or NUMA node) numbers and its Linux list form (`0-3,7`), as cpuset.cpus,
 * sysfs and the CPU manager's state file write it. Immutable: every operation returns a new set,
 * kept as a sorted array of distinct non-negative integers.
 */
import { OrchError } from '../../api/errors.js';

/** A CPU list is malformed (not numbers and ascending ranges such as 0-3,7). */
export const CM_CPUSET_INVALID = 'CM_CPUSET_INVALID';

export class CPUSet {
  private readonly ids: readonly number[];

  private constructor(sorted: readonly number[]) {
    this.ids = sorted;
  }

  static of(...ids: readonly number[]): CPUSet {
    return new CPUSet([...new Set(ids)].sort((a, b) => a - b));
  }

  static readonly EMPTY = new CPUSet([]);

  /** Parses `0-3,7` (an empty or blank text is the empty set). Throws CM_CPUSET_INVALID. */
  static parse(text: string, subject = 'cpuset'): CPUSet {
    const trimmed = text.trim();
    if (trimmed === '') return CPUSet.EMPTY;
    const ids: number[] = [];
    for (const part of trimmed.split(',')) {
      const m = /^\s*(\d+)(?:-(\d+))?\s*$/.exec(part);
      const from = Number(m?.[1]);
      const to = m?.[2] === undefined ? from : Number(m[2]);
      if (m === null || to < from) {
        throw new OrchError(CM_CPUSET_INVALID, 'invalid', `${JSON.stringify(text)} is not a CPU list; use numbers and ascending ranges such as 0-3,7`, { subject });
      }
      for (let id = from; id <= to; id++) ids.push(id);
    }
    return CPUSet.of(...ids);
  }

  list(): number[] {
    return [...this.ids];
  }

  size(): number {
    return this.ids.length;
  }

  isEmpty(): boolean {
    return this.ids.length === 0;
  }

  has(id: number): boolean {
    return this.ids.includes(id);
  }

  union(...others: readonly CPUSet[]): CPUSet {
    return CPUSet.of(...this.ids, ...others.flatMap((o) => o.ids));
  }

  intersection(other: CPUSet): CPUSet {
    return new CPUSet(this.ids.filter((id) => other.has(id)));
  }

  difference(other: CPUSet): CPUSet {
    return new CPUSet(this.ids.filter((id) => !other.has(id)));
  }

  isSubsetOf(other: CPUSet): boolean {
    return this.ids.every((id) => other.has(id));
  }

  equals(other: CPUSet): boolean {
    return this.ids.length === other.ids.length && this.ids.every((id, i) => other.ids[i] === id);
  }

  /** The Linux list form, every run of consecutive ids as `a-b` (`0-1,3`), as upstream prints a cpuset. */
  toString(): string {
    const parts: string[] = [];
    let i = 0;
    while (i < this.ids.length) {
      const start = this.ids[i] ?? 0;
      let end = start;
      while (this.ids[i + 1] === end + 1) {
        end++;
        i++;
      }
      parts.push(start === end ? String(start) : `${start}-${end}`);
      i++;
    }
    return parts.join(',');
  }
}
