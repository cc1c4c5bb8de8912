/**
 * `nodeagent config print`: the effective configuration as a complete NodeagentConfiguration
 * (YAML or JSON), optionally annotated with where each field that is not at its default came
 * from. The same serialisation serves /configz later. Reading the printed file back with
 * --config gives the same effective configuration.
 */
import { Document, isMap, isScalar } from 'yaml';
import { formatDuration } from '../../api/duration.js';
import type { CommandLineOptions } from './flags/table.js';
import type { Field, Schema } from './schema.js';
import { CONFIGURATION_KIND, GROUP_VERSION, configurationSchema, type NodeagentConfiguration } from './types.js';

export type OutputFormat = 'yaml' | 'json';

export interface PrintOptions {
  readonly output: OutputFormat;
  readonly showSource: boolean;
}

/** Splits `config print`'s own flags (--output/-o, --show-source) from the agent's flags. */
export function splitPrintArgs(argv: readonly string[]): { print: PrintOptions; rest: string[]; errors: string[] } {
  const rest: string[] = [];
  const errors: string[] = [];
  let output: OutputFormat = 'yaml';
  let showSource = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const m = /^(?:--output|-o)(?:=(.*))?$/.exec(arg);
    if (m !== null) {
      const value = m[1] ?? argv[++i];
      if (value === 'yaml' || value === 'json') output = value;
      else errors.push(`invalid value ${JSON.stringify(value ?? '')} for flag --output: use yaml or json`);
      continue;
    }
    const s = /^--show-source(?:=(.*))?$/.exec(arg);
    if (s !== null) {
      if (s[1] === undefined || s[1] === 'true') showSource = true;
      else if (s[1] === 'false') showSource = false;
      else errors.push(`invalid value ${JSON.stringify(s[1])} for flag --show-source: use true or false`);
      continue;
    }
    rest.push(arg);
  }
  return { print: { output, showSource }, rest, errors };
}

function serializeField(field: Field, value: unknown): unknown {
  switch (field.kind) {
    case 'duration':
    case 'time-or-duration':
      return formatDuration(value as number);
    case 'struct':
      return value === null ? undefined : serializeStruct(field.fields, value as Record<string, unknown>);
    case 'list':
      return (value as Record<string, unknown>[]).map((item) => serializeStruct(field.element, item));
    case 'optional-int':
    case 'optional-string':
      return value ?? undefined;
    default:
      return value;
  }
}

function serializeStruct(schema: Schema, obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema)) {
    const v = serializeField(field, obj[name]);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** The configuration as the plain JSON object of its wire form (kind and apiVersion first). */
export function toWireObject(config: NodeagentConfiguration): Record<string, unknown> {
  return {
    kind: CONFIGURATION_KIND,
    apiVersion: GROUP_VERSION,
    ...serializeStruct(configurationSchema, config),
  };
}

/** The command-line-only options that differ from their defaults, for a header comment. */
function optionLines(sources: ReadonlyMap<string, string>, options: CommandLineOptions): string[] {
  const lines: string[] = [];
  for (const [key, source] of sources) {
    if (!key.startsWith('--')) continue;
    const name = key.slice(2).replace(/-([a-z])/g, (_m, ch: string) => ch.toUpperCase());
    const value = (options as unknown as Record<string, unknown>)[name];
    lines.push(` ${key}=${typeof value === 'string' ? value : JSON.stringify(value)} (${source})`);
  }
  return lines;
}

/** Renders the configuration in `print.output`, annotated when `print.showSource`. */
export function renderConfiguration(
  config: NodeagentConfiguration,
  sources: ReadonlyMap<string, string>,
  options: CommandLineOptions,
  print: PrintOptions,
): string {
  const wire = toWireObject(config);
  if (print.output === 'json') {
    if (!print.showSource) return `${JSON.stringify(wire, null, 2)}\n`;
    return `${JSON.stringify({ configuration: wire, sources: Object.fromEntries(sources) }, null, 2)}\n`;
  }
  const doc = new Document(wire);
  const header = optionLines(sources, options);
  if (header.length > 0) {
    doc.commentBefore = [' Command-line-only settings (no configuration-file field):', ...header].join('\n');
  }
  if (print.showSource) {
    for (const [path, source] of sources) {
      if (path.startsWith('--')) continue;
      const parts = path.split('.');
      const node = doc.getIn(parts, true);
      if (isScalar(node)) {
        node.comment = ` ${source}`;
        continue;
      }
      // A map or list value: the comment goes on the line before its key.
      const parent = parts.length === 1 ? doc.contents : doc.getIn(parts.slice(0, -1), true);
      if (!isMap(parent)) continue;
      const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === parts[parts.length - 1]);
      if (pair !== undefined && isScalar(pair.key)) pair.key.commentBefore = ` ${source}`;
    }
  }
  return doc.toString({ lineWidth: 0 });
}
