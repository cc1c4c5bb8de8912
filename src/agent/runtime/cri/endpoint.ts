/**
 * Parses --container-runtime-endpoint / --image-service-endpoint into a gRPC target. Linux
 * only: `unix:///abs/path` or a bare absolute path (taken as a unix socket).
 */
import path from 'node:path';
import { OrchError } from '../../../api/errors.js';

export interface CriEndpoint {
  /** As the user gave it, for messages. */
  readonly raw: string;
  /** The socket's absolute path. */
  readonly socketPath: string;
  /** The gRPC target, `unix:///abs/path`. */
  readonly target: string;
}

/**
 * Throws OrchError CRI_INVALID_ENDPOINT ('invalid') naming `flag` for any other form (tcp://,
 * npipe://, relative paths, empty). Pure.
 */
export function parseCriEndpoint(raw: string, flag = '--container-runtime-endpoint'): CriEndpoint {
  const value = raw.trim();
  let socketPath: string | undefined;
  if (value.startsWith('unix://')) {
    socketPath = value.slice('unix://'.length);
  } else if (value.startsWith('/')) {
    socketPath = value;
  }
  if (socketPath === undefined || !path.isAbsolute(socketPath) || socketPath.length <= 1) {
    throw new OrchError(
      'CRI_INVALID_ENDPOINT',
      'invalid',
      `${flag}: "${raw}" is not a supported endpoint; use unix:///path/to/runtime.sock or an absolute socket path`,
      { subject: flag },
    );
  }
  const normalized = path.normalize(socketPath);
  return { raw, socketPath: normalized, target: `unix://${normalized}` };
}
