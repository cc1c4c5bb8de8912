/**
 * The sample hostpath CSI driver as a program (see README.md): reads its settings from a JSON
 * file named on the command line and serves; prints every call it gets as a JSON line on stdout.
 *
 *   node dist/examples/csi-hostpath/main.js driver.json
 *
 * Commands on stdin, one JSON line each: {"cmd":"fail","methods":["NodePublishVolume"]} makes
 * those methods answer errors ([] to heal); {"cmd":"delay","methods":["NodeStageVolume"],"ms":5000}
 * makes them answer that late (0 heals); {"cmd":"exit"} stops and exits.
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { HostPathDriver, type HostPathDriverOptions } from './driver.js';

function print(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

async function main(): Promise<void> {
  const file = process.argv[2];
  if (file === undefined) {
    process.stderr.write('usage: main.js <settings.json>\n');
    process.exit(2);
  }
  const settings = JSON.parse(readFileSync(file, 'utf8')) as Omit<HostPathDriverOptions, 'onEvent'>;
  const driver = new HostPathDriver({ ...settings, onEvent: print });
  await driver.start();
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() === '') continue;
    try {
      const command = JSON.parse(line) as { cmd: string; methods?: string[]; ms?: number };
      if (command.cmd === 'fail') driver.setFailing(command.methods ?? []);
      else if (command.cmd === 'delay') driver.setDelay(command.methods ?? [], command.ms ?? 0);
      else if (command.cmd === 'exit') break;
      else print({ event: 'error', message: `unknown command ${command.cmd}` });
    } catch (err) {
      print({ event: 'error', message: err instanceof Error ? err.message : String(err) });
    }
  }
  driver.stop();
  process.exit(0);
}

main().catch((err: unknown) => {
  print({ event: 'error', message: err instanceof Error ? err.message : String(err) });
  process.exit(1);
});
