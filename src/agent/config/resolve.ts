/**
 * Resolves the effective configuration from the command line, the environment, the file
 * given by --config and the drop-ins of --config-dir, with the precedence
 * flags > drop-ins > config file > defaults. Without --config the flag defaults apply; with it,
 * the file defaults. Only flags actually given override the file. Every problem (flag syntax,
 * file syntax, field types, validation) is collected and thrown at once.
 */
import { AggregateInvalidError } from '../../api/errors.js';
import { resolveFeatureGates, type FeatureGates } from './feature-gates.js';
import { listDropIns, loadDocument, resolveUserPath } from './file.js';
import { parseArgs, type FlagOccurrence } from './flags/parser.js';
import { deprecationNote } from './flags/help.js';
import {
  FLAGS_BY_NAME, FLAGS_BY_SHORT, defaultCommandLineOptions, type CommandLineOptions, type FlagSpec,
} from './flags/table.js';
import { parseFlagValue } from './flags/values.js';
import { mergeOver, withDefaults } from './merge.js';
import { defaultsOf, getPath, setPath } from './schema.js';
import { CONFIGURATION_KIND, configurationSchema, type NodeagentConfiguration } from './types.js';
import { validateConfiguration } from './validate.js';

export const DROPIN_ENV = 'NODEAGENT_CONFIG_DROPIN_DIR_ALPHA';

/** Every problem of a configuration, and the warnings gathered before they were found. */
export class ConfigurationError extends AggregateInvalidError {
  constructor(problems: readonly string[], readonly warnings: readonly string[]) {
    super('CONFIG_INVALID', problems, `invalid configuration (${problems.length} problem${problems.length === 1 ? '' : 's'})`);
    this.name = 'ConfigurationError';
  }
}

export type Action = 'run' | 'help' | 'version' | 'version-raw';

export interface ResolveInput {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** The agent's built-in version (vX.Y.Z). */
  readonly version: string;
}

export interface ResolvedConfiguration {
  readonly action: Action;
  readonly config: NodeagentConfiguration;
  readonly options: CommandLineOptions;
  readonly gates: FeatureGates;
  /** Where each field (dotted path) or option (`--flag`) that is not at its default came from. */
  readonly sources: ReadonlyMap<string, string>;
  /** Deprecation notices and other warnings, one line each, for standard error. */
  readonly warnings: readonly string[];
  readonly positionals: readonly string[];
  /** The version to report: --version=vX.Y.Z, else the built-in one. */
  readonly version: string;
}

/** The defaults of a start without --config (upstream's legacy flag defaults). */
export function flagDefaults(): NodeagentConfiguration {
  const c = defaultsOf(configurationSchema) as NodeagentConfiguration;
  c.authentication.anonymous.enabled = true;
  c.authentication.webhook.enabled = false;
  c.authorization.mode = 'AlwaysAllow';
  c.readOnlyPort = 10255;
  return c;
}

/** The defaults of a start with --config (the file's defaults). */
export function fileDefaults(): NodeagentConfiguration {
  return defaultsOf(configurationSchema) as NodeagentConfiguration;
}

interface FlagValues {
  readonly fields: Map<string, { value: unknown; given: string }>;
  readonly options: Map<keyof CommandLineOptions, { value: unknown; given: string }>;
  readonly actions: Map<'help' | 'version', unknown>;
}

function interpretFlags(occurrences: readonly FlagOccurrence[], problems: string[], warnings: string[]): FlagValues {
  const values: FlagValues = { fields: new Map(), options: new Map(), actions: new Map() };
  const warned = new Set<FlagSpec>();
  const previous = new Map<FlagSpec, unknown>();
  for (const occ of occurrences) {
    const result = parseFlagValue(occ.spec, occ.text, previous.get(occ.spec));
    if (!result.ok) {
      problems.push(result.error);
      continue;
    }
    // An occurrence that leaves the value as it was (an empty IP) sets nothing; it still warns.
    if (result.unchanged !== true) {
      previous.set(occ.spec, result.value);
      const target = occ.spec.target;
      if ('field' in target) values.fields.set(target.field, { value: result.value, given: occ.given });
      else if ('option' in target) values.options.set(target.option, { value: result.value, given: occ.given });
      else values.actions.set(target.action, result.value);
    }
    const note = deprecationNote(occ.spec);
    if (note !== undefined && !warned.has(occ.spec)) {
      warned.add(occ.spec);
      warnings.push(`Flag --${occ.spec.name} has been deprecated, ${note}`);
    }
  }
  return values;
}

/**
 * Upstream's file defaulting: a nodeStatusReportFrequency the file leaves unset (or zero) follows
 * a nodeStatusUpdateFrequency the file sets. It happens when the file is decoded, so the flag
 * --node-status-update-frequency and the drop-ins (laid over without defaulting) move only the
 * update frequency.
 */
function followUpdateFrequency(patch: Record<string, unknown>, config: Record<string, unknown>, sources: Map<string, string>, path: string): void {
  const update = patch.nodeStatusUpdateFrequency;
  const report = patch.nodeStatusReportFrequency;
  if (typeof update !== 'number' || update === 0 || (typeof report === 'number' && report !== 0)) return;
  config.nodeStatusReportFrequency = update;
  sources.set('nodeStatusReportFrequency', `nodeStatusUpdateFrequency (config file ${path})`);
}

/**
 * Resolves everything. Throws ConfigurationError (code `CONFIG_INVALID`) listing every problem,
 * one line each, naming the flag, file or field. Reads the files; changes nothing.
 */
export async function resolveConfiguration(input: ResolveInput): Promise<ResolvedConfiguration> {
  const problems: string[] = [];
  const warnings: string[] = [];
  const parsed = parseArgs(input.argv, { byName: (n) => FLAGS_BY_NAME.get(n), byShort: (s) => FLAGS_BY_SHORT.get(s) });
  problems.push(...parsed.errors);
  const flags = interpretFlags(parsed.occurrences, problems, warnings);

  const options = defaultCommandLineOptions();
  const sources = new Map<string, string>();
  for (const [name, { value, given }] of flags.options) {
    (options as unknown as Record<string, unknown>)[name] = value;
    sources.set(given, `flag ${given}`);
  }
  let version = input.version;
  let action: Action = 'run';
  const versionFlag = flags.actions.get('version');
  if (typeof versionFlag === 'string' && versionFlag.startsWith('v')) {
    version = versionFlag;
    options.versionOverride = versionFlag;
  } else if (versionFlag === 'true') action = 'version';
  else if (versionFlag === 'raw') action = 'version-raw';
  if (flags.actions.get('help') === true) action = 'help';

  if (options.configDir === '' && (input.env[DROPIN_ENV] ?? '') !== '') {
    options.configDir = input.env[DROPIN_ENV] ?? '';
    sources.set('--config-dir', `environment ${DROPIN_ENV}`);
  }

  // Base: the file (with file defaults) or the flag defaults.
  let config: Record<string, unknown> = flagDefaults();
  if (action === 'run' && options.config !== '') {
    const path = resolveUserPath(options.config, input.cwd);
    try {
      const doc = await loadDocument(path, configurationSchema, CONFIGURATION_KIND, 'configuration file (--config)');
      problems.push(...doc.problems);
      warnings.push(...doc.warnings);
      config = withDefaults(configurationSchema, doc.patch);
      for (const p of doc.present) sources.set(p, `config file ${path}`);
      followUpdateFrequency(doc.patch, config, sources, path);
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
    }
  }
  if (action === 'run' && options.configDir !== '') {
    const dir = resolveUserPath(options.configDir, input.cwd);
    try {
      for (const path of await listDropIns(dir)) {
        const doc = await loadDocument(path, configurationSchema, CONFIGURATION_KIND, 'drop-in file');
        problems.push(...doc.problems);
        warnings.push(...doc.warnings);
        mergeOver(configurationSchema, config, doc.patch);
        for (const p of doc.present) sources.set(p, `drop-in ${path}`);
      }
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
    }
  }
  // Flags given on the command line; feature gates merge entry by entry.
  for (const [field, { value, given }] of flags.fields) {
    if (field === 'featureGates') {
      const current = getPath(config, field) as Record<string, boolean> | null;
      setPath(config, field, { ...(current ?? {}), ...(value as Record<string, boolean>) });
    } else {
      setPath(config, field, value);
    }
    sources.set(field, `flag ${given}`);
  }
  // Upstream's defaulting: a parallel pull limit the user gave without serializeImagePulls turns serialization off.
  const maxParallel = config.maxParallelImagePulls;
  if (typeof maxParallel === 'number' && maxParallel >= 2 && !sources.has('serializeImagePulls')) {
    config.serializeImagePulls = false;
    sources.set('serializeImagePulls', `maxParallelImagePulls (${sources.get('maxParallelImagePulls') ?? ''})`);
  }

  const effective = config as unknown as NodeagentConfiguration;
  const gates = resolveFeatureGates(effective.featureGates);
  if (action === 'run') {
    if (parsed.positionals.length > 0) {
      problems.push(`nodeagent takes no arguments, got ${parsed.positionals.map((p) => JSON.stringify(p)).join(' ')}`);
    }
    const result = validateConfiguration(effective, { gates, options, version });
    warnings.push(...result.warnings);
    for (const p of result.problems) {
      const source = sources.get(p.field.replace(/\[\d+\].*$/, ''));
      problems.push(`${p.field}: ${p.message}${source === undefined ? '' : ` (set by ${source})`}`);
    }
  }
  if (problems.length > 0) {
    throw new ConfigurationError(problems, warnings);
  }
  return { action, config: effective, options, gates, sources, warnings, positionals: parsed.positionals, version };
}
