/**
 * Keeps the dispatcher's configuration equal to the stored FlowSchema and
 * PriorityLevelConfiguration objects: at start, creates the suggested objects that are missing
 * (upstream's bootstrap: an operator's changes to an existing object are kept), then follows
 * both resources with informers and reconfigures on every change.
 */
import type { Clock } from '../../api/clock.js';
import { isAlreadyExists, messageOf } from '../../api/errors.js';
import { Informer, type ResourceClient } from '../controllers/client/index.js';
import type { FlowControl } from './dispatcher.js';
import { suggestedFlowSchemas, suggestedPriorityLevels } from './suggested.js';

export interface FlowControlSourceOptions {
  readonly flowControl: FlowControl;
  readonly levels: ResourceClient;
  readonly schemas: ResourceClient;
  readonly clock: Clock;
  readonly log: (message: string) => void;
}

export class FlowControlSource {
  private readonly levels: Informer;
  private readonly schemas: Informer;
  private pending = false;

  constructor(private readonly options: FlowControlSourceOptions) {
    this.levels = new Informer({ client: options.levels, clock: options.clock, log: options.log, what: 'prioritylevelconfigurations' });
    this.schemas = new Informer({ client: options.schemas, clock: options.clock, log: options.log, what: 'flowschemas' });
    const handler = { added: () => { this.changed(); }, updated: () => { this.changed(); }, deleted: () => { this.changed(); } };
    this.levels.addHandler(handler);
    this.schemas.addHandler(handler);
  }

  async start(): Promise<void> {
    await ensure(this.options.levels, suggestedPriorityLevels(), this.options.log);
    await ensure(this.options.schemas, suggestedFlowSchemas(), this.options.log);
    await Promise.all([this.levels.start(), this.schemas.start()]);
    this.apply();
  }

  async close(): Promise<void> {
    await Promise.all([this.levels.close(), this.schemas.close()]);
  }

  /** Many changes in one turn (the first list) reconfigure once. */
  private changed(): void {
    if (this.pending) return;
    this.pending = true;
    queueMicrotask(() => {
      this.pending = false;
      this.apply();
    });
  }

  private apply(): void {
    this.options.flowControl.configure(this.levels.list(), this.schemas.list());
  }
}

async function ensure(client: ResourceClient, objects: readonly Record<string, unknown>[], log: (m: string) => void): Promise<void> {
  const existing = new Set((await client.list()).items.map((o) => (o.metadata as { name?: string } | undefined)?.name));
  for (const o of objects) {
    const name = (o.metadata as { name: string }).name;
    if (existing.has(name)) continue;
    try {
      await client.create('', o);
    } catch (err) {
      if (!isAlreadyExists(err)) log(`flowcontrol: cannot create the suggested ${String(o.kind)} ${name}: ${messageOf(err)}`);
    }
  }
}
