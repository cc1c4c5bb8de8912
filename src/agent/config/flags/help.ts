/**
 * The --help text: usage, then every flag with its type, meaning, default and deprecation,
 * in pflag's layout. Defaults are passed in (computed from what actually runs).
 */
import { featureGateHelp } from '../feature-gates.js';
import { FLAGS, type FlagSpec, type FlagType } from './table.js';
import { compareCodeUnits } from '../../../api/order.js';

const TYPE_NAMES: Record<FlagType, string> = {
  string: 'string',
  ip: 'ip',
  bool: '',
  int32: 'int32',
  int: 'int',
  int64: 'int',
  duration: 'duration',
  strings: 'strings',
  map: 'mapStringString',
  'langle-map': 'mapStringString',
  'map-bool': 'mapStringBool',
  'header-map': 'colonSeparatedMultimapStringString',
  'reserved-memory': 'reservedMemory',
  taints: 'taints',
  vmodule: 'pattern=N,...',
  level: 'Level',
  version: 'version[=true]',
  help: '',
};

export const USAGE = `nodeagent - the node agent

Usage:
  nodeagent [flags]
  nodeagent config print [flags] [--output yaml|json] [--show-source]

The agent runs on every node: it takes pod specifications from a manifest path, a URL and
the API server (--orchconfig), and makes sure the containers they describe are running and
healthy, through the container runtime's CRI endpoint.

'nodeagent config print' resolves the flags, --config and --config-dir exactly as a start
would and prints the effective NodeagentConfiguration (--output yaml, the default, or json);
--show-source adds where each field that is not at its default came from.
`;

export function deprecationNote(spec: FlagSpec): string | undefined {
  const d = spec.deprecation;
  if (d === undefined) return undefined;
  if (d.kind === 'cfg' && 'field' in spec.target) {
    return `set ${spec.target.field} in the file given by --config instead`;
  }
  if (d.kind === 'rm') return `will be removed in ${d.when}`;
  return undefined;
}

/** The whole help text. `defaultText(spec)` gives the default to show, or '' for none. */
export function helpText(defaultText: (spec: FlagSpec) => string): string {
  const rows = [...FLAGS].sort((a, b) => compareCodeUnits(a.name, b.name)).map((spec) => {
    const type = TYPE_NAMES[spec.type];
    const left = `${spec.short === undefined ? '    ' : `-${spec.short}, `}--${spec.name}${type === '' ? '' : ` ${type}`}`;
    let text = spec.usage;
    const def = defaultText(spec);
    if (def !== '') text += spec.type === 'string' ? ` (default "${def}")` : ` (default ${def})`;
    const note = deprecationNote(spec);
    if (note !== undefined) text += ` (DEPRECATED: ${note})`;
    if (spec.type === 'map-bool') {
      text += `\nOptions are:\n${featureGateHelp()}`;
    }
    return { left, text };
  });
  const width = Math.min(60, Math.max(...rows.map((r) => r.left.length)) + 2);
  const body = rows
    .map(({ left, text }) => {
      const [first, ...more] = text.split('\n');
      const pad = ' '.repeat(width + 2);
      const head = `  ${left.padEnd(width)}${left.length >= width ? `\n${pad}` : ''}${first ?? ''}`;
      return [head, ...more.map((m) => `${pad}${m}`)].join('\n');
    })
    .join('\n');
  return `${USAGE}\nFlags:\n${body}\n`;
}
