/**
 * The API Priority and Fairness filter: classifies a request by the flow schemas (lowest
 * matchingPrecedence first), then waits for a seat of the schema's priority level (exempt
 * levels do not wait). A request its level turns away is answered 429 with Retry-After by the
 * router. The configuration is replaced whole by configure() (from the stored objects); the
 * mandatory `exempt` and `catch-all` levels and schemas are always there.
 */
import type { Clock } from '../../api/clock.js';
import type { WireObject } from '../registry/index.js';
import {
  classify, concurrencyLimits, distinguisherOf, flowSchemaOf, ordered, priorityLevelOf,
  type FlowSchema, type PriorityLevel, type RequestDigest,
} from './config.js';
import type { FlowControlMetrics } from './metrics.js';
import { QueueSet, type Cancellation, type RejectReason } from './queueset.js';
import { flowHash } from './shuffle.js';
import { suggestedFlowSchemas, suggestedPriorityLevels } from './suggested.js';

export interface FlowControlOptions {
  readonly clock: Clock;
  /** --max-requests-inflight + --max-mutating-requests-inflight (upstream: 400 + 200). */
  readonly serverConcurrencyLimit: number;
  /** The longest a request waits in a queue (upstream: a quarter of the 60 s request timeout). */
  readonly maxWaitMs: number;
  readonly metrics?: FlowControlMetrics;
}

export type Decision =
  | { readonly kind: 'execute'; readonly flowSchema: FlowSchema; readonly level: PriorityLevel; readonly release: () => void }
  | { readonly kind: 'reject'; readonly flowSchema: FlowSchema; readonly level: PriorityLevel; readonly reason: RejectReason };

const MANDATORY_LEVELS = new Set(['exempt', 'catch-all']);
const MANDATORY_SCHEMAS = new Set(['exempt', 'catch-all']);

export class FlowControl {
  private schemas: FlowSchema[] = [];
  private levels = new Map<string, PriorityLevel>();
  private readonly queueSets = new Map<string, QueueSet>();

  constructor(private readonly options: FlowControlOptions) {
    // Until the stored objects are read: the suggested configuration.
    this.configure(suggestedPriorityLevels(), suggestedFlowSchemas());
  }

  /** The priority levels and their concurrency limits now (for metrics and docs). */
  limits(): Map<string, number> {
    return new Map([...this.queueSets].map(([name, qs]) => [name, qs.limit]));
  }

  /** Replaces the configuration by these stored objects (plus the mandatory ones they lack). */
  configure(levelObjects: readonly WireObject[], schemaObjects: readonly WireObject[]): void {
    const levels = levelObjects.map(priorityLevelOf).filter((l) => l.name !== '');
    for (const o of suggestedPriorityLevels().map(priorityLevelOf)) {
      if (MANDATORY_LEVELS.has(o.name) && !levels.some((l) => l.name === o.name)) levels.push(o);
    }
    const schemas = schemaObjects.map(flowSchemaOf).filter((s) => s.name !== '');
    for (const o of suggestedFlowSchemas().map(flowSchemaOf)) {
      if (MANDATORY_SCHEMAS.has(o.name) && !schemas.some((s) => s.name === o.name)) schemas.push(o);
    }
    this.levels = new Map(levels.map((l) => [l.name, l]));
    this.schemas = ordered(schemas);
    const limits = concurrencyLimits(levels, this.options.serverConcurrencyLimit);
    for (const level of levels) {
      if (level.exempt) continue;
      const config = { concurrencyLimit: limits.get(level.name) ?? 1, queues: level.queues, handSize: level.handSize, queueLengthLimit: level.queueLengthLimit };
      const existing = this.queueSets.get(level.name);
      if (existing === undefined) this.queueSets.set(level.name, new QueueSet(config, this.options.clock, this.options.maxWaitMs));
      else existing.reconfigure(config);
      this.options.metrics?.nominalLimit(level.name, config.concurrencyLimit);
    }
    // A level that is gone keeps its queue set until its requests are done; new ones do not reach it.
    for (const name of [...this.queueSets.keys()]) {
      const qs = this.queueSets.get(name) as QueueSet;
      if (!this.levels.has(name) && qs.executing === 0 && qs.inQueue === 0) this.queueSets.delete(name);
    }
  }

  private catchAllSchema(): FlowSchema {
    return this.schemas.find((s) => s.name === 'catch-all') as FlowSchema;
  }

  /** Classifies the request and waits for its turn. */
  async admit(r: RequestDigest, signal?: Cancellation): Promise<Decision> {
    const catchAll = this.levels.get('catch-all') as PriorityLevel;
    let flowSchema = classify(this.schemas, r) ?? this.catchAllSchema();
    let level = this.levels.get(flowSchema.level);
    if (level === undefined) {
      // A schema naming a level that does not exist: upstream serves it as catch-all.
      flowSchema = this.catchAllSchema();
      level = catchAll;
    }
    const m = this.options.metrics;
    const labels = { priority_level: level.name, flow_schema: flowSchema.name };
    if (level.exempt) {
      m?.dispatched(labels, 0);
      m?.executing(labels, 1);
      return { kind: 'execute', flowSchema, level, release: once(() => m?.executing(labels, -1)) };
    }
    const qs = this.queueSets.get(level.name) as QueueSet;
    m?.inQueue(labels, 1);
    const admission = await qs.admit(flowHash(flowSchema.name, distinguisherOf(flowSchema, r)), signal);
    m?.inQueue(labels, -1);
    if (admission.kind === 'rejected') {
      m?.rejected(labels, admission.reason, admission.waitedMs / 1000);
      return { kind: 'reject', flowSchema, level, reason: admission.reason };
    }
    m?.dispatched(labels, admission.waitedMs / 1000);
    m?.executing(labels, 1);
    return {
      kind: 'execute', flowSchema, level,
      release: once(() => {
        m?.executing(labels, -1);
        admission.release();
      }),
    };
  }
}

function once(f: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    f();
  };
}
