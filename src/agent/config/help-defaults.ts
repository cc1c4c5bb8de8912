/**
 * The defaults --help shows: each flag's default as the agent really starts with it (the flags'
 * own defaults, which differ from the configuration file's), in pflag's notation.
 */
import { formatDuration } from '../../api/duration.js';
import { helpText } from './flags/help.js';
import { defaultCommandLineOptions, type FlagSpec } from './flags/table.js';
import { flagDefaults } from './resolve.js';
import { getPath } from './schema.js';

/** A flag's default in pflag's notation, or '' when pflag shows none (false, empty, zero level). */
export function flagDefaultText(spec: FlagSpec): string {
  const target = spec.target;
  let value: unknown;
  if ('field' in target) value = getPath(flagDefaults(), target.field);
  else if ('option' in target) value = defaultCommandLineOptions()[target.option];
  else return '';
  if (spec.type === 'duration') return formatDuration(value as number);
  if (spec.type === 'bool') return value === true ? 'true' : '';
  if (Array.isArray(value)) return value.length === 0 ? '' : `[${value.join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    const sep = spec.type === 'langle-map' ? '<' : '=';
    return entries.length === 0 ? '' : entries.map(([k, v]) => `${k}${sep}${String(v)}`).join(',');
  }
  if (typeof value === 'number') return spec.type === 'level' && value === 0 ? '' : String(value);
  return typeof value === 'string' ? value : '';
}

/** The whole --help text with the defaults the agent starts with. */
export function agentHelpText(): string {
  return helpText(flagDefaultText);
}
