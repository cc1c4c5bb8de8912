/**
 * Command-line parsing with pflag's rules, as users of the upstream agent know them:
 * `--flag=value` and `--flag value`; boolean flags bare (`--flag`) or `--flag=false` (never
 * taking the next argument); shorthands `-v 3`, `-v=3`, `-v3`, `-h`; `--` ends the flags;
 * underscores in names read as dashes; non-flag arguments are collected as positionals.
 * Values are not interpreted here (values.ts does that).
 */
import type { FlagSpec } from './table.js';

export interface FlagOccurrence {
  readonly spec: FlagSpec;
  /** The value text (`'true'` for a bare boolean flag). */
  readonly text: string;
  /** How the user wrote the flag, e.g. `--port` or `-v`. */
  readonly given: string;
}

export interface ParsedArgs {
  readonly occurrences: readonly FlagOccurrence[];
  readonly positionals: readonly string[];
  readonly errors: readonly string[];
}

export interface FlagLookup {
  byName(name: string): FlagSpec | undefined;
  byShort(short: string): FlagSpec | undefined;
}

/** Types whose bare form means "true" (NoOptDefVal in pflag). */
function takesOptionalValue(spec: FlagSpec): boolean {
  return spec.type === 'bool' || spec.type === 'help' || spec.type === 'version';
}

/** Parses argv (without the program name). Never throws; problems are in `errors`. */
export function parseArgs(argv: readonly string[], flags: FlagLookup): ParsedArgs {
  const occurrences: FlagOccurrence[] = [];
  const positionals: string[] = [];
  const errors: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('--')) {
      const body = arg.slice(2);
      const eq = body.indexOf('=');
      const rawName = eq < 0 ? body : body.slice(0, eq);
      const name = rawName.replaceAll('_', '-');
      const spec = flags.byName(name);
      if (spec === undefined || name === '') {
        errors.push(`unknown flag: --${rawName}`);
        continue;
      }
      if (eq >= 0) {
        occurrences.push({ spec, text: body.slice(eq + 1), given: `--${name}` });
      } else if (takesOptionalValue(spec)) {
        occurrences.push({ spec, text: 'true', given: `--${name}` });
      } else if (i + 1 < argv.length) {
        occurrences.push({ spec, text: argv[i + 1] ?? '', given: `--${name}` });
        i++;
      } else {
        errors.push(`flag needs an argument: --${name}`);
      }
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      // Shorthands; several boolean ones may be combined (-hv3 is -h -v 3).
      let rest = arg.slice(1);
      while (rest.length > 0) {
        const short = rest[0] ?? '';
        const spec = flags.byShort(short);
        if (spec === undefined) {
          errors.push(`unknown shorthand flag: '${short}' in ${arg}`);
          break;
        }
        const after = rest.slice(1);
        if (after.startsWith('=')) {
          occurrences.push({ spec, text: after.slice(1), given: `-${short}` });
          break;
        }
        if (takesOptionalValue(spec)) {
          occurrences.push({ spec, text: 'true', given: `-${short}` });
          rest = after;
          continue;
        }
        if (after.length > 0) {
          occurrences.push({ spec, text: after, given: `-${short}` });
        } else if (i + 1 < argv.length) {
          occurrences.push({ spec, text: argv[i + 1] ?? '', given: `-${short}` });
          i++;
        } else {
          errors.push(`flag needs an argument: '${short}' in -${short}`);
        }
        break;
      }
      continue;
    }
    positionals.push(arg);
  }
  return { occurrences, positionals, errors };
}
