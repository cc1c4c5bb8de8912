/**
 * What the runtime says of its own configuration in its verbose CRI status (containerd: the
 * JSON of its CRI plugin's config under `config`): its root directory (containerdRootDir)
 * and its sandbox image (sandboxImage). Other runtimes may say nothing: both are then ''.
 */
import type { RuntimeInfoService } from '../runtime/cri/index.js';

export interface RuntimeConfig {
  readonly rootDir: string;
  readonly sandboxImage: string;
}

export async function readRuntimeConfig(runtime: Pick<RuntimeInfoService, 'status'>): Promise<RuntimeConfig> {
  const info = (await runtime.status({ verbose: true })).info;
  let config: { containerdRootDir?: unknown; sandboxImage?: unknown } = {};
  try {
    config = JSON.parse(info.config ?? '{}') as typeof config;
  } catch {
    config = {}; // not containerd's JSON: nothing known (the callers say what they miss)
  }
  return {
    rootDir: typeof config.containerdRootDir === 'string' ? config.containerdRootDir : '',
    sandboxImage: typeof config.sandboxImage === 'string' ? config.sandboxImage : '',
  };
}
