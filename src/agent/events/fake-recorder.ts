/**
 * FakeEventRecorder: an EventRecorder for the tests of modules that record events; it keeps
 * every call, in order, and writes nothing. Test code only: import it from testing.ts.
 */
import type { EventReference, EventType } from './event-object.js';
import type { EventRecorder } from './recorder.js';

export interface RecordedEvent {
  readonly regarding: EventReference;
  readonly type: EventType;
  readonly reason: string;
  readonly action: string;
  readonly note: string;
}

export class FakeEventRecorder implements EventRecorder {
  readonly events: RecordedEvent[] = [];
  stopped = false;

  event(regarding: EventReference, type: EventType, reason: string, action: string, note: string): void {
    this.events.push({ regarding, type, reason, action, note });
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }

  stop(): Promise<void> {
    this.stopped = true;
    return Promise.resolve();
  }

  /** The reasons recorded so far, in order (handy in assertions). */
  reasons(): string[] {
    return this.events.map((e) => e.reason);
  }
}
