/**
 * The CRI module's test-only entry: the in-memory FakeRuntime (RuntimeService and
 * ImageService) for the unit tests of the modules that call the runtime, and the CRI behaviour
 * suite that holds it and containerd to the same behaviour. Tests import these from here;
 * production code must not (eslint.config.js forbids it).
 */
export { FakeRuntime, type FakeContainer, type FakeExecResult, type FakeSandbox, type FakeUsage } from './fake-runtime.js';
export type { FakeCall } from './fake-calls.js';
export type { FakeImageFs } from './fake-images.js';
export { runCriBehaviour, EXEC_CASES, type CriFactory, type CriHarness, type CriUnderTest, type SandboxRequest } from './behaviour.js';
