/** The CSIDriver, VolumeAttachment and Secret reads of the mounter, a GET each (storage.orch.io/v1). */
import type { Secret } from 'kubernetes-types/core/v1.js';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { getIfExists, type RestClient } from '../orchclient/index.js';
import type { CsiApi } from './mounter.js';

const STORAGE = '/apis/storage.orch.io/v1';

export function createCsiApi(options: { readonly rest: RestClient }): CsiApi {
  const { rest } = options;
  return {
    csiDriver: (name) => getIfExists<CSIDriver>(rest, `${STORAGE}/csidrivers/${encodeURIComponent(name)}`),
    volumeAttachment: (name) => getIfExists<VolumeAttachment>(rest, `${STORAGE}/volumeattachments/${encodeURIComponent(name)}`),
    // A GET each time, as upstream's CSI plugin (not the pods' secret manager: a PV's secret is in no pod's references).
    patchClaimStatus: async (namespace, name, status) => {
      await rest.patch(`/api/v1/namespaces/${encodeURIComponent(namespace)}/persistentvolumeclaims/${encodeURIComponent(name)}/status`, 'merge', { status });
    },
    secret: (namespace, name) => getIfExists<Secret>(rest, `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`),
  };
}
