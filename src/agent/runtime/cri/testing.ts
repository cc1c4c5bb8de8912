/**
 * The CRI module's test-only entry: the in-memory runtime (memory-runtime.ts) under the name the
 * unit tests of the modules that call the runtime know it by, FakeRuntime, and the CRI behaviour
 * suite that holds it and containerd to the same behaviour. Tests import these from here;
 * production code must not (eslint.config.js forbids it); the simulated nodes use MemoryRuntime
 * through index.ts.
 */
export {
  MemoryRuntime as FakeRuntime, type MemoryContainer as FakeContainer, type MemoryExecResult as FakeExecResult,
  type MemorySandbox as FakeSandbox, type UsageSetting as FakeUsage,
} from './memory-runtime.js';
export type { MemoryCall as FakeCall } from './memory-calls.js';
export type { MemoryImageFs as FakeImageFs } from './memory-images.js';
export { runCriBehaviour, EXEC_CASES, type CriFactory, type CriHarness, type CriUnderTest, type SandboxRequest } from './behaviour.js';
