/**
 * /spec/: the machine information upstream takes from cAdvisor (its MachineInfo JSON: cores,
 * sockets, memory and swap capacity, huge pages, machine ID, system UUID, boot ID, the root
 * file system, network devices, cloud fields). Read from /proc and /sys once, on the first
 * request (it does not change while the agent runs), with upstream's JSON names.
 */
import { readFile, readdir, statfs } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { parseMeminfo } from './stats/node.js';
import { sendJson } from './http.js';
import type { Route } from './router.js';
import type { Clock } from '../../api/clock.js';

export interface MachineInfoOptions {
  readonly rootDir: string;
  /** The timestamp of the answer. */
  readonly clock: Pick<Clock, 'now'>;
  readonly procDir?: string;
  readonly sysDir?: string;
  readonly etcDir?: string;
}

async function read(path: string): Promise<string> {
  return readFile(path, 'utf8').then((t) => t.trim(), () => ''); // an absent file is an empty value, as cAdvisor reports it
}

/** Cores, sockets, physical cores, vendor and frequency from /proc/cpuinfo (exported for tests). */
export function parseCpuinfo(text: string): { cores: number; sockets: number; physicalCores: number; vendor: string; khz: number } {
  const sockets = new Set<string>();
  const physical = new Set<string>();
  let cores = 0;
  let vendor = '';
  let mhz = 0;
  let socket = '0';
  for (const line of text.split('\n')) {
    const [k = '', v = ''] = line.split(':').map((s) => s.trim());
    if (k === 'processor') cores++;
    else if (k === 'physical id') { socket = v; sockets.add(v); }
    else if (k === 'core id') physical.add(`${socket}/${v}`);
    else if (k === 'vendor_id' && vendor === '') vendor = v;
    else if (k === 'cpu MHz' && mhz === 0) mhz = Number(v);
  }
  return { cores, sockets: Math.max(1, sockets.size), physicalCores: Math.max(1, physical.size || cores), vendor, khz: Math.round(mhz * 1000) };
}

async function networkDevices(sysDir: string): Promise<{ name: string; mac_address: string; speed: number; mtu: number }[]> {
  const names = await readdir(`${sysDir}/class/net`).catch(() => [] as string[]); // no sysfs: no devices listed
  const out = [];
  for (const name of names.sort()) {
    if (name === 'lo' || name.startsWith('veth')) continue;
    const base = `${sysDir}/class/net/${name}`;
    const speed = Number(await read(`${base}/speed`));
    out.push({ name, mac_address: await read(`${base}/address`), speed: Number.isFinite(speed) && speed > 0 ? speed : 0, mtu: Number(await read(`${base}/mtu`)) || 0 });
  }
  return out;
}

export async function machineInfo(o: MachineInfoOptions): Promise<Record<string, unknown>> {
  const proc = o.procDir ?? '/proc';
  const sys = o.sysDir ?? '/sys';
  const etc = o.etcDir ?? '/etc';
  const [cpuinfo, meminfo, machineId, dbusId, uuid, bootId] = await Promise.all([
    read(`${proc}/cpuinfo`), read(`${proc}/meminfo`), read(`${etc}/machine-id`), read('/var/lib/dbus/machine-id'),
    read(`${sys}/class/dmi/id/product_uuid`), read(`${proc}/sys/kernel/random/boot_id`),
  ]);
  const cpu = parseCpuinfo(cpuinfo);
  const mem = parseMeminfo(meminfo);
  const hugeSize = (mem.get('Hugepagesize') ?? 0) / 1024;
  const root = await statfs(o.rootDir).catch(() => undefined); // unreadable root dir: no file system listed
  return {
    timestamp: new Date(o.clock.now()).toISOString(),
    vendor_id: cpu.vendor,
    num_cores: cpu.cores || availableParallelism(),
    num_physical_cores: cpu.physicalCores,
    num_sockets: cpu.sockets,
    cpu_frequency_khz: cpu.khz,
    memory_capacity: mem.get('MemTotal') ?? 0,
    swap_capacity: mem.get('SwapTotal') ?? 0,
    memory_by_type: {},
    nvm: { memory_mode_capacity: 0, app_direct_mode_capacity: 0, avg_power_budget: 0 },
    hugepages: hugeSize > 0 ? [{ page_size: hugeSize, num_pages: mem.get('HugePages_Total') ?? 0 }] : [],
    machine_id: machineId || dbusId,
    system_uuid: uuid,
    boot_id: bootId,
    filesystems: root === undefined ? [] : [{
      device: o.rootDir, capacity: root.blocks * root.bsize, type: 'vfs', inodes: root.files, has_inodes: true,
    }],
    disk_map: {},
    network_devices: await networkDevices(sys),
    topology: [],
    cloud_provider: 'Unknown',
    instance_type: 'Unknown',
    instance_id: 'None',
  };
}

export function specRoutes(o: MachineInfoOptions): Route[] {
  let info: Promise<string> | undefined;
  const handle: Route['handle'] = async ({ res }) => {
    info ??= machineInfo(o).then((m) => JSON.stringify(m));
    sendJson(res, 200, await info);
  };
  return [
    { pattern: '/spec', methods: ['GET'], bucket: 'spec', handle },
    { pattern: '/spec/', methods: ['GET'], bucket: 'spec', handle },
  ];
}
