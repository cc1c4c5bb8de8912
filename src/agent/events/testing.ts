/**
 * The events module's test-only entry: FakeEventRecorder, which keeps the events recorded for
 * the tests of the modules that record them. Tests import it from here; production code must
 * not (eslint.config.js forbids it).
 */
export { FakeEventRecorder, type RecordedEvent } from './fake-recorder.js';
