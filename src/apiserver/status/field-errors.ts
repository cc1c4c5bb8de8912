/**
 * Field errors of validation, collected all at once and answered as one 422 Invalid Status whose
 * `details.causes[]` names each field (the shape of apimachinery's field.ErrorList).
 */
import { StatusError } from './status.js';

export type FieldErrorType =
  | 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueNotSupported' | 'FieldValueTooLong'
  | 'FieldValueForbidden' | 'FieldValueDuplicate' | 'FieldValueTypeInvalid';

export interface FieldError {
  readonly type: FieldErrorType;
  /** The JSON path of the field, e.g. `regarding.name` or `metadata.labels`. */
  readonly field: string;
  /** The message of the cause, e.g. `Required value` or `Invalid value: "x": must be ...`. */
  readonly message: string;
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return value === undefined ? 'null' : JSON.stringify(value);
}

/** A list of field errors; the adders return `this` so checks can be chained. */
export class FieldErrors {
  readonly list: FieldError[] = [];

  get empty(): boolean {
    return this.list.length === 0;
  }

  required(field: string, detail = ''): this {
    return this.add('FieldValueRequired', field, detail === '' ? 'Required value' : `Required value: ${detail}`);
  }

  invalid(field: string, value: unknown, detail: string): this {
    return this.add('FieldValueInvalid', field, `Invalid value: ${show(value)}: ${detail}`);
  }

  notSupported(field: string, value: unknown, supported: readonly string[]): this {
    return this.add('FieldValueNotSupported', field, `Unsupported value: ${show(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`);
  }

  tooLong(field: string, max: number, unit = 'characters'): this {
    return this.add('FieldValueTooLong', field, `Too long: may not be more than ${max} ${unit}`);
  }

  forbidden(field: string, detail: string): this {
    return this.add('FieldValueForbidden', field, `Forbidden: ${detail}`);
  }

  duplicate(field: string, value: unknown): this {
    return this.add('FieldValueDuplicate', field, `Duplicate value: ${show(value)}`);
  }

  typeInvalid(field: string, value: unknown, detail: string): this {
    return this.add('FieldValueTypeInvalid', field, `Invalid value: ${show(value)}: ${detail}`);
  }

  /** `problems` are texts of src/api/labels.ts validators: each becomes an Invalid cause. */
  invalidEach(field: string, value: unknown, problems: readonly string[]): this {
    for (const p of problems) this.invalid(field, value, p);
    return this;
  }

  /** Throws the 422 Invalid StatusError when any error was collected. */
  throwIfAny(kind: string, group: string, name: string): void {
    if (!this.empty) throw invalid(kind, group, name, this.list);
  }

  /** A cause with a message of the caller's own (e.g. the lines of src/api validators). */
  add(type: FieldErrorType, field: string, message: string): this {
    this.list.push({ type, field, message });
    return this;
  }
}

/** 422 Invalid: `Event.events.orch.io "x" is invalid: [reason: Required value, ...]`. */
export function invalid(kind: string, group: string, name: string, errors: readonly FieldError[]): StatusError {
  const qualified = group === '' ? kind : `${kind}.${group}`;
  const texts = errors.map((e) => `${e.field}: ${e.message}`);
  const summary = texts.length === 1 ? (texts[0] ?? '') : `[${texts.join(', ')}]`;
  return new StatusError(422, 'Invalid', `${qualified} "${name}" is invalid: ${summary}`, {
    name,
    group,
    kind,
    causes: errors.map((e) => ({ reason: e.type, message: e.message, field: e.field })),
  });
}
