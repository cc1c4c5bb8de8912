/** The CSIDriver and VolumeAttachment reads of the mounter, a GET each (storage.orch.io/v1). */
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { getIfExists, type RestClient } from '../orchclient/index.js';
import type { CsiApi } from './mounter.js';

const STORAGE = '/apis/storage.orch.io/v1';

export function createCsiApi(options: { readonly rest: RestClient }): CsiApi {
  const { rest } = options;
  return {
    csiDriver: (name) => getIfExists<CSIDriver>(rest, `${STORAGE}/csidrivers/${encodeURIComponent(name)}`),
    volumeAttachment: (name) => getIfExists<VolumeAttachment>(rest, `${STORAGE}/volumeattachments/${encodeURIComponent(name)}`),
  };
}
