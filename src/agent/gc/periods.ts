/**
 * The garbage collectors' periods: upstream's constants (1 minute for containers, 5 for images),
 * which the environment variables NODEAGENT_CONTAINER_GC_PERIOD and NODEAGENT_IMAGE_GC_PERIOD
 * (Go durations) shorten for tests and experiments.
 */
import { durationToMs, parseDurationField } from '../../api/duration.js';
import { OrchError } from '../../api/errors.js';
import { CONTAINER_GC_PERIOD_MS, IMAGE_GC_PERIOD_MS } from './collector.js';

/** A GC period from the environment is not a positive Go duration. */
export const GC_INVALID_PERIOD = 'GC_INVALID_PERIOD';

export const CONTAINER_GC_PERIOD_ENV = 'NODEAGENT_CONTAINER_GC_PERIOD';
export const IMAGE_GC_PERIOD_ENV = 'NODEAGENT_IMAGE_GC_PERIOD';

export type Environment = Readonly<Record<string, string | undefined>>;

/** A period from `env[name]` in ms, or `fallback` when unset. Throws GC_INVALID_PERIOD naming the variable. */
export function periodFromEnv(env: Environment, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const ms = durationToMs(parseDurationField(text, name));
  if (!(ms > 0)) throw new OrchError(GC_INVALID_PERIOD, 'invalid', `${name}=${text}: the period must be a positive duration such as 30s`, { subject: name });
  return ms;
}

/** The container and image GC periods (ms) from `env`, upstream's constants when unset. */
export function gcPeriods(env: Environment): { readonly containerPeriodMs: number; readonly imagePeriodMs: number } {
  return {
    containerPeriodMs: periodFromEnv(env, CONTAINER_GC_PERIOD_ENV, CONTAINER_GC_PERIOD_MS),
    imagePeriodMs: periodFromEnv(env, IMAGE_GC_PERIOD_ENV, IMAGE_GC_PERIOD_MS),
  };
}
