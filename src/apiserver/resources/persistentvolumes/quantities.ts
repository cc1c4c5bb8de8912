/** Quantity checks and printing shared by the volume and claim definitions. */
import { compareQuantities, formatQuantity, parseQuantity, type Quantity } from '../../../api/quantity.js';
import { messageOf } from '../../../api/errors.js';
import type { FieldErrors } from '../../status/index.js';

/** The quantity of `text`, or undefined (with a cause on `field`) when it is malformed. */
export function checkedQuantity(errors: FieldErrors, field: string, text: unknown): Quantity | undefined {
  try {
    return parseQuantity(String(text), field);
  } catch (err) {
    errors.invalid(field, String(text), messageOf(err));
    return undefined;
  }
}

/** Upstream's validateBasicResource and ValidatePositiveQuantityValue on one quantity. */
export function checkPositive(errors: FieldErrors, field: string, text: unknown): void {
  const q = checkedQuantity(errors, field, text);
  if (q === undefined) return;
  const zero = parseQuantity('0');
  if (compareQuantities(q, zero) < 0) errors.invalid(field, formatQuantity(q), 'must be a valid resource quantity');
  if (compareQuantities(q, zero) <= 0) errors.invalid(field, formatQuantity(q), 'must be greater than zero');
}

/** A quantity as upstream prints it (canonical), or the text as given when it does not parse; '' for none. */
export function quantityText(text: unknown): string {
  if (typeof text !== 'string' && typeof text !== 'number') return '';
  try {
    return formatQuantity(parseQuantity(String(text)));
  } catch {
    // A stored value that does not parse was refused by validation; print it as it is.
    return String(text);
  }
}

/** a < b, when both parse (false otherwise). */
export function quantityLess(a: unknown, b: unknown): boolean {
  try {
    return compareQuantities(parseQuantity(String(a)), parseQuantity(String(b))) < 0;
  } catch {
    return false;
  }
}
