/**
 * The admission results of the resource managers, as upstream's admission package makes them:
 * an allocation error that carries its own reason (TopologyAffinityError, SMTAlignmentError)
 * refuses the pod with that reason and message; any other failure refuses it with reason
 * UnexpectedAdmissionError and the message `Allocate failed due to <error>, which is unexpected`.
 */
import { OrchError, messageOf } from '../../api/errors.js';

/** A pod refused by the CPU, memory or topology manager; `reason` is upstream's (the pod status reason). */
export const CM_ADMISSION_REFUSED = 'CM_ADMISSION_REFUSED';
/** The CPU or memory manager cannot give a container what it asks for (the pod is refused as unexpected). */
export const CM_ALLOCATION_FAILED = 'CM_ALLOCATION_FAILED';

export const TOPOLOGY_AFFINITY_ERROR = 'TopologyAffinityError';
export const SMT_ALIGNMENT_ERROR = 'SMTAlignmentError';
export const UNEXPECTED_ADMISSION_ERROR = 'UnexpectedAdmissionError';

export class AdmissionError extends OrchError {
  /** The pod status reason. */
  readonly reason: string;

  constructor(reason: string, message: string) {
    super(CM_ADMISSION_REFUSED, 'conflict', message);
    this.name = 'AdmissionError';
    this.reason = reason;
  }
}

/** upstream TopologyAffinityError. */
export function topologyAffinityError(): AdmissionError {
  return new AdmissionError(TOPOLOGY_AFFINITY_ERROR, 'Resources cannot be allocated with Topology locality');
}

export function allocationFailed(message: string, subject?: string): OrchError {
  return new OrchError(CM_ALLOCATION_FAILED, 'conflict', message, subject === undefined ? {} : { subject });
}

/** What the sync loop's admit handlers return. */
export interface AdmitResult {
  readonly admit: boolean;
  readonly reason?: string;
  readonly message?: string;
}

export const ADMIT: AdmitResult = { admit: true };

/** upstream admission.GetPodAdmitResult. */
export function refusal(err: unknown): AdmitResult {
  if (err instanceof AdmissionError) return { admit: false, reason: err.reason, message: err.message };
  return { admit: false, reason: UNEXPECTED_ADMISSION_ERROR, message: `Allocate failed due to ${messageOf(err)}, which is unexpected` };
}
