/**
 * controllers/attachdetach: persistentvolume-attach-detach-controller: VolumeAttachments for the
 * CSI volumes of the pods of nodes that leave attaching to it (created for drivers that attach,
 * deleted once no pod on the node uses the volume and the node unmounted it), and the nodes'
 * status.volumesAttached from the attachments' status.attached. The external attacher (the CSI
 * driver's) does the attaching; the node agent mounts and reports volumesInUse.
 *
 * Must not: touch the store, attach anything itself, or write node status beyond volumesAttached.
 */
export { AttachDetachController, type AttachDetachOptions } from './controller.js';
export { podTerminated } from './desired.js';
