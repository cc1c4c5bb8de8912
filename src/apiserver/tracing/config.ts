/**
 * The file of --tracing-config-file: upstream's TracingConfiguration (apiserver.config.orch.io
 * v1, v1beta1 or v1alpha1), YAML or JSON, with `endpoint` (host:port of an OTLP/gRPC
 * collector, default localhost:4317) and `samplingRatePerMillion` (0 to 1000000, default 0).
 * Unknown fields and kinds are refused, as upstream's strict decoding refuses them.
 */
import { readFileSync } from 'node:fs';
import { OrchError, messageOf } from '../../api/errors.js';
import { DEFAULT_TRACING_ENDPOINT } from '../../api/tracing/index.js';
import { parseYaml } from '../http/index.js';

export const TRACING_CONFIG_INVALID = 'APISERVER_TRACING_CONFIG_INVALID';

const API_VERSIONS = new Set(['apiserver.config.orch.io/v1', 'apiserver.config.orch.io/v1beta1', 'apiserver.config.orch.io/v1alpha1']);
const FIELDS = new Set(['apiVersion', 'kind', 'endpoint', 'samplingRatePerMillion']);

export interface ApiServerTracingConfig {
  readonly endpoint: string;
  readonly samplingRatePerMillion: number;
}

function fail(file: string, message: string): never {
  throw new OrchError(TRACING_CONFIG_INVALID, 'invalid', `--tracing-config-file ${file}: ${message}`, { subject: file });
}

export function parseTracingConfig(text: string, file: string): ApiServerTracingConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    fail(file, `not YAML or JSON: ${messageOf(err)}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) fail(file, 'not an object');
  const o = doc as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!FIELDS.has(key)) fail(file, `unknown field ${JSON.stringify(key)}`);
  if (o.kind !== 'TracingConfiguration') fail(file, `kind ${JSON.stringify(o.kind)} is not TracingConfiguration`);
  if (typeof o.apiVersion !== 'string' || !API_VERSIONS.has(o.apiVersion)) fail(file, `apiVersion ${JSON.stringify(o.apiVersion)} is not one of ${[...API_VERSIONS].join(', ')}`);
  const endpoint = o.endpoint ?? DEFAULT_TRACING_ENDPOINT;
  if (typeof endpoint !== 'string' || endpoint === '') fail(file, 'endpoint must be a non-empty string');
  const rate = o.samplingRatePerMillion ?? 0;
  if (typeof rate !== 'number' || !Number.isInteger(rate) || rate < 0 || rate > 1_000_000) {
    fail(file, `samplingRatePerMillion ${JSON.stringify(rate)} must be an integer from 0 to 1000000`);
  }
  return { endpoint, samplingRatePerMillion: rate };
}

export function loadTracingConfigFile(file: string): ApiServerTracingConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    fail(file, `cannot read: ${messageOf(err)}`);
  }
  return parseTracingConfig(text, file);
}
