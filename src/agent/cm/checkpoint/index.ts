/**
 * checkpoint: the state files of the CPU and memory managers in upstream's format (JSON with a
 * `checksum`: FNV-1a over Go's spew printing of the checkpoint struct), so that a state file moves
 * between upstream's kubelet and this agent, and an edited one is refused.
 *
 * It owns: reading, parsing and atomically writing one file, and the checksum text. It must not:
 * know what a manager keeps in its file (the managers describe their structs as GoValues).
 */
export { CM_CHECKPOINT_FAILED, checkpointError, field, parseCheckpoint, readCheckpoint, writeCheckpoint } from './file.js';
export { fnv32a, goDump, goInt, goString, type GoValue } from './go-dump.js';
