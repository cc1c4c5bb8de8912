/**
 * Signal observations from one reading of the node (upstream's makeSignalObservations): what
 * is available of what capacity for each signal whose source could be read. Memory's capacity
 * is what is available plus the working set; PIDs are the limit minus the running tasks.
 */
import type { NodeReadings, Observation, Signal } from './types.js';

export function makeObservations(r: NodeReadings): Map<Signal, Observation> {
  const out = new Map<Signal, Observation>();
  const time = r.time;
  const put = (signal: Signal, available: number, capacity: number): void => { out.set(signal, { available, capacity, time }); };
  if (r.memory !== undefined) put('memory.available', r.memory.availableBytes, r.memory.availableBytes + r.memory.workingSetBytes);
  if (r.allocatableMemory !== undefined) {
    const a = r.allocatableMemory;
    put('allocatableMemory.available', a.availableBytes, a.availableBytes + a.workingSetBytes);
  }
  if (r.nodefs !== undefined) {
    put('nodefs.available', r.nodefs.availableBytes, r.nodefs.capacityBytes);
    put('nodefs.inodesFree', r.nodefs.inodesFree, r.nodefs.inodes);
  }
  if (r.imagefs !== undefined) {
    put('imagefs.available', r.imagefs.availableBytes, r.imagefs.capacityBytes);
    put('imagefs.inodesFree', r.imagefs.inodesFree, r.imagefs.inodes);
  }
  if (r.pids !== undefined) put('pid.available', r.pids.max - r.pids.running, r.pids.max);
  return out;
}

/** Whether the image file system is another file system than the node's (upstream: HasDedicatedImageFs). */
export function hasDedicatedImageFs(r: NodeReadings): boolean | undefined {
  if (r.nodefs === undefined || r.imagefs === undefined) return undefined;
  return r.nodefs.device !== r.imagefs.device;
}
