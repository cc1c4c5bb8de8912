/**
 * resize: in-place pod resize on the node (the InPlacePodVerticalScaling gate): the allocation
 * checkpoint in upstream's format (checkpoint.ts), the admission and per-container decisions
 * (decide.ts) and the per-pod state with the status fields (manager.ts).
 *
 * Must not: talk to the runtime or the cgroups (kuberuntime and podsync apply what it decides).
 */
export {
  formatResizeState, goQuantity, loadResizeState, parseResizeState, POD_STATUS_MANAGER_STATE_FILE, storeResizeState,
  type ResizeState, type ResizeStatus, type ResourceList,
} from './checkpoint.js';
export { admitResize, containerResizeAction, enforcedValues, sameCpuMemory, type Allocatable, type ContainerResizeAction, type Requested } from './decide.js';
export { createResizeManager, type ResizeManager, type ResizeManagerOptions } from './manager.js';
