/** Which rows of a long list are on screen: the arithmetic of the virtual list, kept apart to be tested. */

export interface RowWindow {
  /** First row index drawn (inclusive). */
  readonly start: number;
  /** Last row index drawn (exclusive). */
  readonly end: number;
}

/**
 * The rows that intersect the viewport, widened by `overscan` rows on each side and clamped to
 * [0, count]. A viewport of 0 (not laid out yet) still draws the overscan.
 */
export function visibleRows(scrollTop: number, viewportHeight: number, rowHeight: number, count: number, overscan: number): RowWindow {
  if (count <= 0 || rowHeight <= 0) return { start: 0, end: 0 };
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const last = Math.ceil((Math.max(0, scrollTop) + Math.max(0, viewportHeight)) / rowHeight);
  return { start: Math.max(0, Math.min(count, first - overscan)), end: Math.max(0, Math.min(count, last + overscan)) };
}
