/** Part of nodeagent's composition root: the log root built from the resolved logging configuration. */
import type { Clock } from '../api/clock.js';
import { parseByteSize } from '../api/quantity.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import { LogRoot } from '../agent/logging/index.js';

export function buildLogRoot(r: ResolvedConfiguration, clock: Clock): LogRoot {
  const l = r.config.logging;
  return new LogRoot({
    format: l.format === 'json' ? 'json' : 'text',
    verbosity: l.verbosity,
    vmodule: l.vmodule,
    splitStream: l.options.json.splitStream,
    infoBufferSize: parseByteSize(l.options.json.infoBufferSize),
    flushFrequency: l.flushFrequency,
    clock,
  });
}
