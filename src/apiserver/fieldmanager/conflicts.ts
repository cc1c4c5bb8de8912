/**
 * The 409 an apply answers when it would change fields other managers own, as upstream writes
 * it: reason Conflict, one cause of type FieldManagerConflict per field naming its manager, and
 * the message `Apply failed with 1 conflict: conflict with "mgr": .data.a` (or, for several,
 * the conflicts grouped by manager). An Update manager is named with its API version
 * (`"kubectl-client-side-apply" using v1`), one of a subresource with it.
 */
import { StatusError } from '../status/index.js';
import { parseManagerKey } from './managed.js';
import { pathText } from './path.js';
import type { Conflicts } from './updater.js';

/** How upstream names the manager of a conflict. */
export function describeManager(key: string): string {
  let id;
  try {
    id = parseManagerKey(key);
  } catch {
    // Not an identity (a bare name): quoted as it is.
    return JSON.stringify(key);
  }
  let text = JSON.stringify(id.manager);
  if (id.subresource !== '') text = `${text} with subresource ${JSON.stringify(id.subresource)}`;
  return id.operation === 'Update' ? `${text} using ${id.apiVersion}` : text;
}

export function conflictMessage(conflicts: Conflicts): string {
  const all = conflicts.list();
  const first = all[0];
  if (all.length === 1 && first !== undefined) return `Apply failed with 1 conflict: conflict with ${describeManager(first.manager)}: ${pathText(first.path)}`;
  const lines: string[] = [];
  let current = '';
  for (const c of all) {
    if (c.manager !== current) {
      current = c.manager;
      lines.push(`conflicts with ${describeManager(c.manager)}:`);
    }
    lines.push(`- ${pathText(c.path)}`);
  }
  return `Apply failed with ${all.length} conflicts: ${lines.join('\n')}`;
}

/** The 409 Conflict Status of `conflicts`. */
export function conflictError(conflicts: Conflicts): StatusError {
  const causes = conflicts.list().map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${describeManager(c.manager)}`, field: pathText(c.path) }));
  return new StatusError(409, 'Conflict', conflictMessage(conflicts), { causes });
}
