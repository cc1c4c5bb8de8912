/**
 * The orchclient module's test-only entry: FakeRestClient, an in-memory API server behind the
 * RestClient interface, apiError, the errors the REST client throws, and the REST behaviour
 * suite that holds the fake and orch-apiserver to the same behaviour. Tests import these from
 * here; production code must not (eslint.config.js forbids it).
 */
export { apiError, FakeRestClient, type FakeRestClientOptions, type FakeWatch, type RestCall, type RestResponder } from './fake-rest.js';
export { runRestBehaviour, CASE_LABEL, type RestFactory, type RestHarness, type RestHarnessOptions } from './behaviour.js';
