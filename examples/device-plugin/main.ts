/**
 * The sample device plugin as a program (see README.md): reads its settings from a JSON file
 * named on the command line, starts, and then takes commands as JSON lines on stdin; prints what
 * it does and what the agent asks of it as JSON lines on stdout.
 *
 *   node dist/examples/device-plugin/main.js plugin.json
 *
 * Commands: {"cmd":"devices","devices":[{"id":"a","healthy":false,"numa":[0]}]} replaces the
 * device list; {"cmd":"stop"} stops serving (the agent marks the devices unhealthy);
 * {"cmd":"start"} serves and registers again; {"cmd":"exit"} stops and exits.
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { SampleDevicePlugin, type SampleDevice, type SamplePluginOptions } from './plugin.js';

function print(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

async function main(): Promise<void> {
  const file = process.argv[2];
  if (file === undefined) {
    process.stderr.write('usage: main.js <settings.json>\n');
    process.exit(2);
  }
  const settings = JSON.parse(readFileSync(file, 'utf8')) as Omit<SamplePluginOptions, 'onEvent'>;
  let plugin = new SampleDevicePlugin({ ...settings, onEvent: print });
  let devices: readonly SampleDevice[] = settings.devices;
  await plugin.start();
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    try {
      const command = JSON.parse(line) as { cmd: string; devices?: SampleDevice[] };
      if (command.cmd === 'devices') {
        devices = command.devices ?? [];
        plugin.setDevices(devices);
      } else if (command.cmd === 'stop') {
        plugin.stop();
      } else if (command.cmd === 'start') {
        plugin = new SampleDevicePlugin({ ...settings, devices, onEvent: print });
        await plugin.start();
      } else if (command.cmd === 'exit') {
        break;
      } else {
        print({ event: 'error', message: `unknown command ${command.cmd}` });
      }
    } catch (err) {
      print({ event: 'error', message: err instanceof Error ? err.message : String(err) });
    }
  }
  plugin.stop();
  process.exit(0);
}

main().catch((err: unknown) => {
  print({ event: 'error', message: err instanceof Error ? err.message : String(err) });
  process.exit(1);
});
