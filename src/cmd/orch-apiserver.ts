/**
 * The composition root of orch-apiserver. The server itself is built in a later issue; for
 * now the binary answers --help and --version and refuses to start, saying so.
 */
import { VERSION } from '../version.js';

const HELP = `orch-apiserver - the cluster API server nodeagent registers with

Usage:
  orch-apiserver [flags]

Flags:
  -h, --help      Print help
      --version   Print version and exit

This build does not serve the API yet.
`;

function main(argv: readonly string[]): number {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(HELP);
    return 0;
  }
  if (argv.includes('--version')) {
    process.stdout.write(`orch-apiserver ${VERSION}\n`);
    return 0;
  }
  process.stderr.write(`orch-apiserver: this build does not serve the API yet; run with --help\n`);
  return 1;
}

process.exitCode = main(process.argv.slice(2));
