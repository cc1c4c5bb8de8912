/**
 * selectors: label and field selectors as the list, watch and deletecollection query parameters
 * write them, parsed into matchers. Must not: know resources (callers pass the supported field
 * labels and compute each object's fields) or storage.
 */
export { parseLabelSelector, type LabelOperator, type LabelRequirement, type LabelSelector } from './labels.js';
export { parseFieldSelector, type FieldRequirement, type FieldSelector } from './fields.js';
