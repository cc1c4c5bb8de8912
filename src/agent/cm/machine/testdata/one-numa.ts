/**
 * The sysfs topology recorded on the development machine (Debian 12 VM): 2 CPUs, each its own
 * core, one socket, one NUMA node. Paths are relative to /sys; node0/meminfo keeps its first two
 * lines.
 */
export const ONE_NUMA_SYSFS: Readonly<Record<string, string>> = {
  'devices/system/cpu/online': '0-1\n',
  'devices/system/cpu/cpu0/topology/physical_package_id': '0\n',
  'devices/system/cpu/cpu0/topology/thread_siblings_list': '0\n',
  'devices/system/cpu/cpu1/topology/physical_package_id': '0\n',
  'devices/system/cpu/cpu1/topology/thread_siblings_list': '1\n',
  'devices/system/node/node0/cpulist': '0-1\n',
  'devices/system/node/node0/distance': '10\n',
  'devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages': '0\n',
  'devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages': '0\n',
  'devices/system/node/node0/meminfo': 'Node 0 MemTotal:        9398476 kB\nNode 0 MemFree:         5680336 kB\n',
};
