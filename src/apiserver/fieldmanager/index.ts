/**
 * fieldmanager: server-side apply and field ownership, as upstream's structured-merge-diff and
 * the apiserver's fieldmanager do them. Field sets and their FieldsV1 form (set.ts, fieldsv1.ts),
 * objects seen through their schema's merge rules (typed.ts), comparison, merge and removal
 * (compare.ts, merge.ts), ownership across writes with conflicts and pruning (updater.ts), and
 * metadata.managedFields kept on every write of a resource view (field-manager.ts), with the
 * manager's name from the request (manager-name.ts) and client-side apply's annotation
 * (last-applied.ts).
 *
 * Must not: read or write storage, know HTTP beyond the Status errors it throws, or know any
 * resource: the merge rules come from each view's schema (schema/merge-rules.ts).
 */
export { FieldManager, MAX_UPDATE_MANAGERS, type ApplyRequest, type FieldManagerOptions } from './field-manager.js';
export { conflictMessage, describeManager } from './conflicts.js';
export { LAST_APPLIED_ANNOTATION, KUBECTL_APPLY_MANAGER } from './last-applied.js';
export { FIELD_MANAGER_MAX_LENGTH, managerFromUserAgent, resolveManager } from './manager-name.js';
export { applyProblems, toFieldSet } from './typed.js';
export { setToFields, fieldsToSet } from './fieldsv1.js';
export { FieldSet } from './set.js';
export { pathText, type Path, type PathElement } from './path.js';
