import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { NODE_MACHINE_INFO_UNREADABLE, goArch, hugepageResourceName, parseMemTotal, parsePrettyName, readMachineInfo } from './machine.js';

const dir = mkdtempSync(join(tmpdir(), 'nodestatus-machine-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, text: string): string {
  const path = join(dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

void describe('machine facts', () => {
  void it('parses MemTotal, PRETTY_NAME, page sizes and architectures', () => {
    assert.equal(parseMemTotal('MemTotal:       16318712 kB\nMemFree: 1 kB\n'), 16318712n * 1024n);
    assert.equal(parseMemTotal('MemFree: 1 kB\n'), undefined);
    assert.equal(parsePrettyName('NAME="Debian"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n'), 'Debian GNU/Linux 12 (bookworm)');
    assert.equal(parsePrettyName("PRETTY_NAME='Alpine'"), 'Alpine');
    assert.equal(parsePrettyName('PRETTY_NAME=Plain'), 'Plain');
    assert.equal(hugepageResourceName(2048), 'hugepages-2Mi');
    assert.equal(hugepageResourceName(1048576), 'hugepages-1Gi');
    assert.equal(hugepageResourceName(64), 'hugepages-64Ki');
    assert.equal(goArch('x64'), 'amd64');
    assert.equal(goArch('arm64'), 'arm64');
  });

  void it('reads the files, falls back to machine-id for the system UUID, and measures the root dir', async () => {
    const paths = {
      meminfo: file('meminfo', 'MemTotal: 2048 kB\n'),
      machineID: file('machine-id', 'abc123\n'),
      productUUID: join(dir, 'missing-uuid'),
      bootID: file('boot_id', 'boot-1\n'),
      osRelease: file('os-release', 'PRETTY_NAME="Test OS 1"\n'),
      hugepagesDir: join(dir, 'hugepages'),
    };
    file('hugepages/hugepages-2048kB/nr_hugepages', '3\n');
    const m = await readMachineInfo({ rootDir: dir, paths, cores: () => 6, kernelRelease: () => '6.6.6', arch: 'x64' });
    assert.equal(m.cores, 6);
    assert.equal(m.memoryBytes, 2048n * 1024n);
    assert.equal(m.machineID, 'abc123');
    assert.equal(m.systemUUID, 'abc123');
    assert.equal(m.bootID, 'boot-1');
    assert.equal(m.osImage, 'Test OS 1');
    assert.equal(m.kernelVersion, '6.6.6');
    assert.equal(m.architecture, 'amd64');
    assert.equal(m.operatingSystem, 'linux');
    assert.deepEqual([...m.hugepages], [['hugepages-2Mi', 3n * 2048n * 1024n]]);
    assert.ok(m.ephemeralStorageBytes !== undefined && m.ephemeralStorageBytes > 0n);

    const withUUID = await readMachineInfo({ rootDir: dir, paths: { ...paths, productUUID: file('product_uuid', 'UUID-9\n') } });
    assert.equal(withUUID.systemUUID, 'UUID-9');
  });

  void it('fails with NODE_MACHINE_INFO_UNREADABLE without MemTotal', async () => {
    await assert.rejects(readMachineInfo({ rootDir: dir, paths: { meminfo: join(dir, 'nope') } }), { code: NODE_MACHINE_INFO_UNREADABLE });
    await assert.rejects(readMachineInfo({ rootDir: dir, paths: { meminfo: file('meminfo2', 'MemFree: 1 kB\n') } }), { code: NODE_MACHINE_INFO_UNREADABLE });
  });
});
