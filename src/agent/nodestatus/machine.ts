/**
 * The machine facts of the node status (upstream: cadvisor's MachineInfo and VersionInfo):
 * logical CPUs, MemTotal, the capacity of the root directory's filesystem, hugepages, and the
 * identity files (machine-id, product_uuid, boot_id, os-release). Paths are injectable.
 */
import { readFile, readdir, statfs } from 'node:fs/promises';
import { cpus, release } from 'node:os';
import { OrchError, messageOf } from '../../api/errors.js';
import { silentLogger } from './backoff.js';
import type { NodeStatusLogger } from './types.js';

/** /proc/meminfo cannot be read or has no MemTotal: the node's memory capacity is unknown. */
export const NODE_MACHINE_INFO_UNREADABLE = 'NODE_MACHINE_INFO_UNREADABLE';

export interface MachinePaths {
  readonly meminfo: string;
  readonly machineID: string;
  readonly productUUID: string;
  readonly bootID: string;
  readonly osRelease: string;
  /** Holds one `hugepages-<size>kB` directory per page size. */
  readonly hugepagesDir: string;
}

export const DEFAULT_MACHINE_PATHS: MachinePaths = {
  meminfo: '/proc/meminfo',
  machineID: '/etc/machine-id',
  productUUID: '/sys/class/dmi/id/product_uuid',
  bootID: '/proc/sys/kernel/random/boot_id',
  osRelease: '/etc/os-release',
  hugepagesDir: '/sys/kernel/mm/hugepages',
};

export interface MachineInfo {
  readonly cores: number;
  readonly memoryBytes: bigint;
  /** The capacity of the filesystem of the agent's root directory; undefined when statfs failed. */
  readonly ephemeralStorageBytes: bigint | undefined;
  /** `hugepages-2Mi` → bytes (pages × page size), for each page size the kernel offers. */
  readonly hugepages: ReadonlyMap<string, bigint>;
  readonly machineID: string;
  readonly systemUUID: string;
  readonly bootID: string;
  readonly kernelVersion: string;
  readonly osImage: string;
  readonly operatingSystem: string;
  readonly architecture: string;
}

export interface MachineInfoOptions {
  /** The agent's root directory (--root-dir); its filesystem is the node's ephemeral storage. */
  readonly rootDir: string;
  readonly paths?: Partial<MachinePaths>;
  /** Logical CPUs; default os.cpus().length. */
  readonly cores?: () => number;
  /** Kernel release; default os.release(). */
  readonly kernelRelease?: () => string;
  readonly arch?: string;
  readonly logger?: NodeStatusLogger;
}

/** Go's GOARCH for Node's process.arch. */
export function goArch(arch: string): string {
  const map: Readonly<Record<string, string>> = { x64: 'amd64', ia32: '386', ppc64: 'ppc64le' };
  return map[arch] ?? arch;
}

/** MemTotal of /proc/meminfo, in bytes. */
export function parseMemTotal(text: string): bigint | undefined {
  const m = /^MemTotal:\s+(\d+)\s*kB/m.exec(text);
  return m?.[1] === undefined ? undefined : BigInt(m[1]) * 1024n;
}

/** PRETTY_NAME of os-release (quotes removed), or undefined. */
export function parsePrettyName(text: string): string | undefined {
  const m = /^PRETTY_NAME=(.*)$/m.exec(text);
  if (m?.[1] === undefined) return undefined;
  const value = m[1].trim();
  const unquoted = /^(["'])(.*)\1$/.exec(value);
  return (unquoted?.[2] ?? value).replace(/\\(.)/g, '$1');
}

/** `2048kB` page size → `hugepages-2Mi` (the size in binary units, as upstream names it). */
export function hugepageResourceName(sizeKB: number): string {
  const units = ['Ki', 'Mi', 'Gi', 'Ti'];
  let size = sizeKB;
  let unit = 0;
  while (size % 1024 === 0 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return `hugepages-${size}${units[unit] ?? 'Ki'}`;
}

async function readTrimmed(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return undefined; // absent or unreadable (e.g. product_uuid needs root): the caller falls back
  }
}

async function readHugepages(dir: string, logger: NodeStatusLogger): Promise<Map<string, bigint>> {
  const out = new Map<string, bigint>();
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return out; // no hugepages support in this kernel: nothing to report
  }
  for (const entry of entries) {
    const m = /^hugepages-(\d+)kB$/.exec(entry);
    if (m?.[1] === undefined) continue;
    const sizeKB = Number(m[1]);
    const pages = await readTrimmed(`${dir}/${entry}/nr_hugepages`);
    if (pages === undefined || !/^\d+$/.test(pages)) {
      logger.warn('cannot read the number of hugepages', { dir: `${dir}/${entry}` });
      continue;
    }
    out.set(hugepageResourceName(sizeKB), BigInt(pages) * BigInt(sizeKB) * 1024n);
  }
  return out;
}

/** Reads the machine facts. Throws NODE_MACHINE_INFO_UNREADABLE when MemTotal is unknown. */
export async function readMachineInfo(options: MachineInfoOptions): Promise<MachineInfo> {
  const paths = { ...DEFAULT_MACHINE_PATHS, ...options.paths };
  const logger = options.logger;
  let meminfo: string;
  try {
    meminfo = await readFile(paths.meminfo, 'utf8');
  } catch (err) {
    throw new OrchError(NODE_MACHINE_INFO_UNREADABLE, 'unavailable', `cannot read ${paths.meminfo}: ${messageOf(err)}`, { subject: paths.meminfo, cause: err });
  }
  const memoryBytes = parseMemTotal(meminfo);
  if (memoryBytes === undefined) {
    throw new OrchError(NODE_MACHINE_INFO_UNREADABLE, 'unavailable', `${paths.meminfo} has no MemTotal line`, { subject: paths.meminfo });
  }
  let ephemeralStorageBytes: bigint | undefined;
  try {
    const fs = await statfs(options.rootDir, { bigint: true });
    ephemeralStorageBytes = fs.blocks * fs.bsize;
  } catch (err) {
    logger?.warn('cannot measure the root directory filesystem; ephemeral-storage is not reported', { rootDir: options.rootDir, err: messageOf(err) });
  }
  const machineID = (await readTrimmed(paths.machineID)) ?? '';
  const productUUID = await readTrimmed(paths.productUUID);
  const osRelease = (await readTrimmed(paths.osRelease)) ?? '';
  return {
    cores: Math.max(1, (options.cores ?? (() => cpus().length))()),
    memoryBytes,
    ephemeralStorageBytes,
    hugepages: await readHugepages(paths.hugepagesDir, logger ?? silentLogger),
    machineID,
    systemUUID: productUUID === undefined || productUUID === '' ? machineID : productUUID,
    bootID: (await readTrimmed(paths.bootID)) ?? '',
    kernelVersion: (options.kernelRelease ?? release)(),
    osImage: parsePrettyName(osRelease) ?? 'Linux',
    operatingSystem: 'linux',
    architecture: goArch(options.arch ?? process.arch),
  };
}
