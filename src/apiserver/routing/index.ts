/**
 * routing: the HTTP entry of orch-apiserver. It turns each request into request attributes,
 * authenticates and authorizes it, and dispatches to health/version/discovery/OpenAPI or to the
 * registry handlers and watches of the resource the path names.
 *
 * Must not: hold state across requests beyond the documents it derives from the definitions,
 * or know particular resources.
 */
export { createRouter, type RouterOptions, type VersionInfo } from './router.js';
export { parseRequestInfo, type NonResourceInfo, type RequestInfo, type ResourceInfo } from './request-info.js';
export { aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions } from './discovery.js';
export { openApiDocuments, openApiRoot } from './openapi.js';
