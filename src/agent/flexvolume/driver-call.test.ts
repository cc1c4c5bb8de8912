import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { OrchError } from '../../api/errors.js';
import { callDriver, DEFAULT_CAPABILITIES, execDriver, parseDriverReply, type DriverHandle } from './driver-call.js';
import { FLEXVOLUME_CALL_FAILED, FLEXVOLUME_CALL_TIMEOUT, FLEXVOLUME_OUTPUT_INVALID } from './errors.js';
import { FakeFlexExec } from './testing.js';

const EXE = '/plugins/example.com~lvm/lvm';
const driver = (): DriverHandle => ({ name: 'example.com/lvm', execPath: EXE, unsupported: new Set() });
const options = (fake: FakeFlexExec): Parameters<typeof callDriver>[3] => ({ exec: fake.exec, timeoutMs: 5000, context: 'volume "data": ' });

function rejectsWith(code: string, pattern: RegExp): (err: unknown) => boolean {
  return (err) => {
    assert.ok(err instanceof OrchError, String(err));
    assert.equal(err.code, code);
    assert.match(err.message, pattern);
    return true;
  };
}

void describe('FlexVolume replies', () => {
  void it('parses a reply, overlaying the capabilities the driver states on upstream\'s defaults', () => {
    const reply = parseDriverReply('{"status":"Success","capabilities":{"attach":false,"fsGroup":false}}');
    assert.ok(typeof reply !== 'string');
    assert.deepEqual(reply.capabilities, { ...DEFAULT_CAPABILITIES, attach: false, fsGroup: false });
    assert.equal(reply.message, '');
    const upper = parseDriverReply('{"status":"Success","Capabilities":{"attach":false},"device":"/dev/sdb","extra":1}');
    assert.ok(typeof upper !== 'string');
    assert.equal(upper.capabilities.attach, false);
    assert.equal(upper.device, '/dev/sdb');
  });

  void it('refuses garbage, other JSON, unknown statuses and fields of the wrong type, quoting the output', () => {
    assert.match(parseDriverReply('mounted!') as string, /not JSON: "mounted!"/);
    assert.match(parseDriverReply('') as string, /not JSON: \(no output\)/);
    assert.match(parseDriverReply('[1]') as string, /not a JSON object/);
    assert.match(parseDriverReply('{"status":"OK"}') as string, /"status" is "OK", not "Success", "Failure" or "Not supported"/);
    assert.match(parseDriverReply('{"message":"x"}') as string, /"status" is missing/);
    assert.match(parseDriverReply('{"status":"Success","message":3}') as string, /must be strings/);
    assert.match(parseDriverReply('{"status":"Success","attached":"yes"}') as string, /"attached" must be a boolean/);
    assert.match(parseDriverReply('{"status":"Success","capabilities":{"attach":"no"}}') as string, /capability "attach" must be a boolean/);
  });
});

void describe('FlexVolume driver calls', () => {
  void it('returns a Success reply and passes the call and its arguments', async () => {
    const fake = new FakeFlexExec().on(EXE, 'mount', () => ({ status: 'Success', message: 'ok' }));
    const reply = await callDriver(driver(), 'mount', ['/dir', '{}'], options(fake));
    assert.ok(reply !== 'not-supported');
    assert.equal(reply.message, 'ok');
    assert.deepEqual(fake.argsOf(), [['mount', '/dir', '{}']]);
  });

  void it('maps Failure, a non-zero exit, garbage and a timeout to typed errors naming the volume, the driver and the call', async () => {
    const fake = new FakeFlexExec()
      .on(EXE, 'mount', () => ({ status: 'Failure', message: 'no such LV' }))
      .on(EXE, 'unmount', () => ({ exitCode: 2, stdout: 'panic', stderr: 'trace' }))
      .on(EXE, 'attach', () => ({ stdout: 'hello' }))
      .on(EXE, 'detach', () => ({ timedOut: true, exitCode: null }))
      .on(EXE, 'waitforattach', () => ({ spawnError: 'EACCES: permission denied', exitCode: null }))
      .on(EXE, 'mountdevice', () => ({ exitCode: 1, stdout: '{"status":"Success"}' }));
    const d = driver();
    await assert.rejects(callDriver(d, 'mount', [], options(fake)), rejectsWith(FLEXVOLUME_CALL_FAILED, /^volume "data": FlexVolume driver example\.com\/lvm: mount failed: status Failure: no such LV$/));
    await assert.rejects(callDriver(d, 'unmount', [], options(fake)), rejectsWith(FLEXVOLUME_CALL_FAILED, /unmount failed: exit code 2, output: "panic"; stderr: "trace"/));
    await assert.rejects(callDriver(d, 'attach', [], options(fake)), rejectsWith(FLEXVOLUME_OUTPUT_INVALID, /attach failed: the output is not JSON: "hello"/));
    await assert.rejects(callDriver(d, 'detach', [], options(fake)), rejectsWith(FLEXVOLUME_CALL_TIMEOUT, /detach failed: no answer within 5 s \(killed\)/));
    await assert.rejects(callDriver(d, 'waitforattach', [], options(fake)), rejectsWith(FLEXVOLUME_CALL_FAILED, /cannot run \/plugins\/example\.com~lvm\/lvm: EACCES/));
    // A non-zero exit is a failure even with a Success reply (upstream: a driver bug).
    await assert.rejects(callDriver(d, 'mountdevice', [], options(fake)), rejectsWith(FLEXVOLUME_CALL_FAILED, /exit code 1, status Success/));
  });

  void it('remembers "Not supported" and does not run the call again', async () => {
    const fake = new FakeFlexExec().on(EXE, 'getvolumename', () => ({ exitCode: 1, stdout: '{"status":"Not supported"}' }));
    const d = driver();
    assert.equal(await callDriver(d, 'getvolumename', [], options(fake)), 'not-supported');
    assert.equal(await callDriver(d, 'getvolumename', [], options(fake)), 'not-supported');
    assert.equal(fake.calls.length, 1);
  });
});

void describe('the real runner', () => {
  let dir: string;
  before(async () => { dir = await mkdtemp(join(tmpdir(), 'flex-exec-')); });
  after(async () => { await rm(dir, { recursive: true, force: true }); });

  void it('runs an executable without a shell, reports its exit code, kills it at the time limit, and says when it cannot start', async () => {
    const script = join(dir, 'driver');
    await writeFile(script, '#!/bin/sh\nif [ "$1" = slow ]; then exec sleep 30; fi\necho "{\\"status\\":\\"Failure\\",\\"message\\":\\"$2\\"}"\nexit 3\n');
    await chmod(script, 0o755);
    const ran = await execDriver(script, ['mount', '$(id)'], { timeoutMs: 10_000 });
    assert.deepEqual(ran, { exitCode: 3, stdout: '{"status":"Failure","message":"$(id)"}\n', stderr: '', timedOut: false });
    const slow = await execDriver(script, ['slow'], { timeoutMs: 100 });
    assert.equal(slow.timedOut, true);
    const missing = await execDriver(join(dir, 'nothing'), ['init'], { timeoutMs: 1000 });
    assert.match(missing.spawnError ?? '', /ENOENT/);
  });
});
