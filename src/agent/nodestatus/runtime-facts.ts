/**
 * The node facts the container runtime gives, read through the three CRI calls they need (the
 * shapes are stated here, so this module stays free of the CRI client): the RuntimeReady and
 * NetworkReady conditions, the runtime's name and version, and the images it holds.
 */
import type { NodeFacts, RuntimeCondition } from './types.js';

/** What the facts read of the runtime (the CRI client has these calls). */
export interface RuntimeFactsSource {
  status(): Promise<{ readonly status: { readonly conditions: readonly { readonly type: string; readonly status: boolean; readonly reason: string; readonly message: string }[] } | null }>;
  version(apiVersion: string): Promise<{ readonly runtimeName: string; readonly runtimeVersion: string }>;
  listImages(): Promise<readonly { readonly repoTags: readonly string[]; readonly repoDigests: readonly string[]; readonly size: string | number | bigint }[]>;
}

/** NodeFacts from the runtime and the agent's health (the first failing check, or undefined). */
export function runtimeNodeFacts(runtime: RuntimeFactsSource, health: () => string | undefined): NodeFacts {
  return {
    async runtimeStatus() {
      const s = await runtime.status();
      const condition = (type: string): RuntimeCondition => {
        const found = s.status?.conditions.find((x) => x.type === type);
        return found === undefined
          ? { ready: false, reason: `${type}Missing`, message: `the runtime reports no ${type} condition` }
          : { ready: found.status, reason: found.reason, message: found.message };
      };
      return { runtime: condition('RuntimeReady'), network: condition('NetworkReady') };
    },
    async runtimeVersion() {
      const v = await runtime.version('v1');
      return { name: v.runtimeName, version: v.runtimeVersion };
    },
    async images() {
      return (await runtime.listImages()).map((i) => ({ names: [...i.repoTags, ...i.repoDigests], sizeBytes: Number(i.size) }));
    },
    health,
  };
}
