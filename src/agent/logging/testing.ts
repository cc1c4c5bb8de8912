/**
 * The logging module's test-only entry: FakeLogger, which keeps the lines for assertions.
 * Tests import it from here; production code must not (eslint.config.js forbids it).
 */
export { FakeLogger, type LogLine } from './fake-logger.js';
