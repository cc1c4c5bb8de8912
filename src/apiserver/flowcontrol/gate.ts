/**
 * What the router asks before serving a request: API Priority and Fairness (the default), or,
 * with --enable-priority-and-fairness=false, upstream's plain max-in-flight limits (read-only
 * and mutating requests counted apart, system:masters and long-running requests not limited, a
 * request beyond the limit turned away at once). Long-running requests other than watches
 * bypass APF as upstream's; a watch holds its seat while it starts (until the handler returns).
 */
import type { RequestDigest } from './config.js';
import type { FlowControl } from './dispatcher.js';
import type { Cancellation } from './queueset.js';

export interface GateRequest extends RequestDigest {
  readonly mutating: boolean;
  readonly longRunning: boolean;
}

export type GateResult =
  | { readonly admitted: true; readonly headers: Readonly<Record<string, string>>; readonly release: () => void }
  | { readonly admitted: false; readonly headers: Readonly<Record<string, string>>; readonly message: string };

export interface RequestGate {
  admit(r: GateRequest, signal?: Cancellation): Promise<GateResult>;
}

const nothing = (): void => undefined;

export function priorityAndFairnessGate(fc: FlowControl): RequestGate {
  return {
    async admit(r, signal) {
      if (r.longRunning && r.verb !== 'watch') return { admitted: true, headers: {}, release: nothing };
      const d = await fc.admit(r, signal);
      const headers = { 'X-Orch-PF-FlowSchema-UID': d.flowSchema.uid, 'X-Orch-PF-PriorityLevel-UID': d.level.uid };
      if (d.kind === 'execute') return { admitted: true, headers, release: d.release };
      return { admitted: false, headers, message: `Too many requests, please try again later (priority level ${d.level.name}: ${d.reason})` };
    },
  };
}

export function maxInFlightGate(limits: { readonly readOnly: number; readonly mutating: number }): RequestGate {
  const inFlight = { readOnly: 0, mutating: 0 };
  return {
    admit(r) {
      if (r.longRunning || r.groups.includes('system:masters')) return Promise.resolve({ admitted: true, headers: {}, release: nothing });
      const kind = r.mutating ? 'mutating' : 'readOnly';
      const limit = limits[kind];
      // 0 means no limit (upstream's flags).
      if (limit > 0 && inFlight[kind] >= limit) {
        return Promise.resolve({ admitted: false, headers: {}, message: `Too many requests, please try again later (more than ${limit} ${r.mutating ? 'mutating' : 'read-only'} requests in flight)` });
      }
      inFlight[kind] += 1;
      let released = false;
      return Promise.resolve({
        admitted: true, headers: {},
        release: () => {
          if (released) return;
          released = true;
          inFlight[kind] -= 1;
        },
      });
    },
  };
}
