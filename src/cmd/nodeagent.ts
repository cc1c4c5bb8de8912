/**
 * The composition root of nodeagent: the only place that knows every concrete module. It
 * resolves the configuration, answers --help, --version and `config print`, runs the startup
 * checks, then builds and starts the agent's modules.
 */
import { realClock, type Clock } from '../api/clock.js';
import { isInvalid, messageOf, type OrchError } from '../api/errors.js';
import {
  agentHelpText, ConfigurationError, loadCredentialProviderConfig, renderConfiguration, resolveConfiguration, splitPrintArgs,
  type ResolvedConfiguration,
} from '../agent/config/index.js';
import type { LogRoot, Logger } from '../agent/logging/index.js';
import { buildLogRoot } from './agent-logs.js';
import { runStartupChecks } from '../agent/startup/index.js';
import { startAgent } from './agent.js';
import { runOnce } from './runonce.js';
import { VERSION } from '../version.js';

/** Exit codes: 0 success, 1 invalid configuration or a failed startup check, 2 usage. */
const EXIT_INVALID = 1;

/** How long the process may stay after the agent stopped before it exits by itself. */
const EXIT_GRACE_MS = 5_000;

/**
 * A stopped agent holds nothing open, so the process ends by itself; should something still be
 * open (a leaked socket or timer, a bug), it is named in the log and the process exits anyway, as
 * upstream's agent does on SIGTERM, rather than staying forever.
 */
function exitIfStillOpen(clock: Clock): void {
  clock.setTimer(EXIT_GRACE_MS, () => {
    // The log is closed by then: straight to stderr.
    process.stderr.write(`nodeagent: still running ${EXIT_GRACE_MS / 1000} s after stopping, held by ${process.getActiveResourcesInfo().join(', ')}; exiting\n`);
    process.exit(process.exitCode ?? 0);
  });
}

async function main(argv: readonly string[]): Promise<number> {
  // Simulated nodes (many agents over an in-memory runtime): loaded only for that command.
  if (argv[0] === 'simulate') return (await import('./simulate.js')).simulate(argv.slice(1));
  const isPrint = argv[0] === 'config' && argv[1] === 'print';
  const split = isPrint ? splitPrintArgs(argv.slice(2)) : undefined;
  if (argv[0] === 'config' && !isPrint) {
    process.stderr.write(`nodeagent: unknown command "config ${argv[1] ?? ''}"; the config command has one subcommand: print\n`);
    return 2;
  }
  let resolved: ResolvedConfiguration;
  try {
    if (split !== undefined && split.errors.length > 0) throw new Error(split.errors.join('\n'));
    resolved = await resolveConfiguration({ argv: split?.rest ?? argv, env: process.env, cwd: process.cwd(), version: VERSION });
  } catch (err) {
    if (err instanceof ConfigurationError) for (const w of err.warnings) process.stderr.write(`W ${w}\n`);
    process.stderr.write(`nodeagent: ${messageOf(err)}\n`);
    if (isInvalid(err) && /unknown (shorthand )?flag/.test(messageOf(err))) {
      process.stderr.write(`Run 'nodeagent --help' for the list of flags.\n`);
    }
    return EXIT_INVALID;
  }
  for (const w of resolved.warnings) process.stderr.write(`W ${w}\n`);

  if (resolved.action === 'help') {
    process.stdout.write(agentHelpText());
    return 0;
  }
  if (resolved.action === 'version') {
    process.stdout.write(`nodeagent ${resolved.version}\n`);
    return 0;
  }
  if (resolved.action === 'version-raw') {
    process.stdout.write(`${JSON.stringify({ gitVersion: resolved.version, platform: `${process.platform}/${process.arch}`, runtime: process.version }, null, 2)}\n`);
    return 0;
  }
  if (resolved.options.imageCredentialProviderConfig !== '') {
    try {
      await loadCredentialProviderConfig(resolved.options.imageCredentialProviderConfig);
    } catch (err) {
      process.stderr.write(`nodeagent: ${messageOf(err)}\n`);
      return EXIT_INVALID;
    }
  }
  if (split !== undefined) {
    process.stdout.write(renderConfiguration(resolved.config, resolved.sources, resolved.options, split.print));
    return 0;
  }
  // The agent's one clock, chosen here: the logger, built first, reads it too.
  const clock = realClock;
  const logs = buildLogRoot(resolved, clock);
  const log = logs.logger('nodeagent');
  log.info('Starting nodeagent', { version: resolved.version, logging: logs.describe() });
  return run(resolved, logs, log, clock);
}

async function run(resolved: ResolvedConfiguration, logs: LogRoot, log: Logger, clock: Clock): Promise<number> {
  const c = resolved.config;
  const startupLog = log.named('startup');
  let lock: { release(): Promise<void> } | undefined;
  try {
    const startup = await runStartupChecks({
      lockFile: resolved.options.lockFile,
      exitOnLockContention: resolved.options.exitOnLockContention,
      onLockContention: () => {
        log.info('Another process wants the lock file; exiting (--exit-on-lock-contention)', { lockFile: resolved.options.lockFile });
        logs.close();
        process.exit(0);
      },
      failSwapOn: c.failSwapOn,
      protectKernelDefaults: c.protectKernelDefaults,
      oomScoreAdj: c.oomScoreAdj,
      maxOpenFiles: c.maxOpenFiles,
      rootDir: resolved.options.rootDir,
      log: { warn: (m) => { startupLog.warn(m); }, info: (m) => { startupLog.info(m); } },
    });
    lock = startup.lock;
  } catch (err) {
    log.error(`Startup failed: ${messageOf(err)}`, { code: (err as OrchError).code });
    logs.close();
    return EXIT_INVALID;
  }
  try {
    if (c.runOnce) return await runOnce(resolved, logs, clock);
    const agent = await startAgent(resolved, logs, clock);
    // The agent runs until it is signalled: its loops' timers hold no process alive, and without
    // a server port nothing else would (the process would end once idle).
    const running = setInterval(() => undefined, 1 << 30);
    const signal = await new Promise<string>((resolve) => {
      process.once('SIGTERM', () => { resolve('SIGTERM'); });
      process.once('SIGINT', () => { resolve('SIGINT'); });
    });
    clearInterval(running);
    log.info('Stopping nodeagent; containers keep running', { signal });
    await agent.stop();
    exitIfStillOpen(clock);
    return 0;
  } catch (err) {
    log.error(`nodeagent failed: ${messageOf(err)}`, { code: (err as OrchError).code });
    return EXIT_INVALID;
  } finally {
    await lock?.release();
    logs.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`nodeagent: unexpected failure: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 70;
  },
);
