/**
 * The orchclient module's test-only entry: FakeRestClient, an in-memory API server behind the
 * RestClient interface, and apiError, the errors the REST client throws. Tests import these
 * from here; production code must not (eslint.config.js forbids it).
 */
export { apiError, FakeRestClient, type FakeRestClientOptions, type FakeWatch, type RestCall, type RestResponder } from './fake-rest.js';
