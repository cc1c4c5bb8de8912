/**
 * routing: the HTTP entry of orch-apiserver. It turns each request into request attributes,
 * authenticates and authorizes it, and dispatches to health/version/discovery/OpenAPI or to the
 * registry handlers and watches of the resource the path names, or to the connector of a connect
 * subresource (pods/log, pods/exec...), upgrade requests included, or of an action subresource
 * (a POST of another kind onto an object: pods/binding).
 *
 * Must not: hold state across requests beyond the documents it derives from the definitions,
 * or know particular resources.
 */
export { createRouter, type Router, type RouterOptions, type VersionInfo } from './router.js';
export { actionConnector, type Action, type ActionConnectorOptions, type ActionRequest } from './action.js';
export { upgradeResponse, type ConnectRequest, type Connector, type UpgradeContext } from './connect.js';
export { parseRequestInfo, type NonResourceInfo, type RequestInfo, type ResourceInfo } from './request-info.js';
export { instrumentation, type Instrumented } from './instrument.js';
export { aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions } from './discovery.js';
export { openApiDocuments, openApiRoot, openApiV2 } from './openapi.js';
