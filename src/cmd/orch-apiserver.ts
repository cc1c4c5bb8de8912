/**
 * The composition root of orch-apiserver: parses the command line, answers --help and
 * --version, then serves (apiserver-serve.ts builds every module) until SIGTERM/SIGINT and shuts
 * everything down.
 *
 * Exit codes: 0 after --help, --version or a clean shutdown; 1 for invalid flags, unreadable
 * files or a failed start.
 */
import { messageOf } from '../api/errors.js';
import { helpText, parseCommandLine } from '../apiserver/server/index.js';
import { VERSION } from '../version.js';

function log(message: string): void {
  process.stderr.write(`${new Date().toISOString()} orch-apiserver: ${message}\n`);
}

async function main(argv: readonly string[]): Promise<number> {
  let command;
  try {
    command = parseCommandLine(argv);
  } catch (err) {
    process.stderr.write(`orch-apiserver: ${messageOf(err)}\nRun 'orch-apiserver --help' for the list of flags.\n`);
    return 1;
  }
  if (command.action === 'help') {
    process.stdout.write(helpText());
    return 0;
  }
  if (command.action === 'version') {
    process.stdout.write(`orch-apiserver ${VERSION}\n`);
    return 0;
  }
  let stop: () => Promise<void>;
  try {
    const { serve } = await import('./apiserver-serve.js');
    stop = await serve(command.options, log);
  } catch (err) {
    process.stderr.write(`orch-apiserver: ${messageOf(err)}\n`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    const onSignal = (signal: string): void => {
      log(`${signal}: shutting down`);
      resolve();
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
  await stop();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`orch-apiserver: ${messageOf(err)}\n`);
    process.exitCode = 1;
  },
);
