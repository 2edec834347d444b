import {
  HINTS,
  type HintLimits,
  type KeyRule,
  OPERATION_HINTS,
  type OperationHints,
  type ValidationHint,
} from "@payments/contract/validation-hints";
import { isObject } from "./words.ts";

// The contract as the validator's messages read it (http/validator-errors.ts): what applies at each
// place a request can reach, read from the contract at `npm run generate` (spec/scripts/validation-hints.mjs
// writes generated/types/validation-hints.ts), so nothing walks the schemas at run time. A finding names
// a path in the request; this follows it, field by field, through the hints, choosing the branch of a
// union that the value's `type` selects.

export type { HintLimits, KeyRule, OperationHints, ValidationHint };

/** A field as the request met it: what applies there, its value, and a union its value did not resolve. */
export interface Located {
  hint: ValidationHint;
  value: unknown;
  /** A union with a `type` that the value does not select a branch of (no object, no or an unknown `type`). */
  union?: { types: string[]; tokenBranch: boolean };
}

const NOTHING: ValidationHint = {};
const NO_OPERATION: OperationHints = { parameters: [] };

/** The hint at an index (every index the generated data gives is one of its hints). */
export const hintAt = (index: number): ValidationHint => HINTS[index] ?? NOTHING;

/** One operation's parameters, body and token path (`method` lower case, `route` the contract's path template). */
export const operationHints = (method: string, route: string): OperationHints =>
  OPERATION_HINTS[`${method} ${route}`] ?? NO_OPERATION;

/** A value at a place (a hint's index; undefined: a place the contract does not describe). */
export function resolve(index: number | undefined, value: unknown): Located {
  const hint = index === undefined ? NOTHING : hintAt(index);
  const union = hint.union;
  if (!union) return { hint, value };
  const chosen = isObject(value) ? union.byType.find((b) => b.type === String(value.type)) : undefined;
  if (chosen) return { hint: hintAt(chosen.hint), value };
  return { hint, value, union: { types: union.types, tokenBranch: union.tokenBranch } };
}

/** The place of one field of an object (a property, or a map's value) or an item of a list. */
export function child(parent: Located, key: string): Located | undefined {
  const container = parent.value;
  const value = isObject(container) || Array.isArray(container) ? Reflect.get(container, key) : undefined;
  const property = parent.hint.properties?.find(([name]) => name === key);
  if (property) return resolve(property[1], value);
  const next = Array.isArray(container) ? parent.hint.elements : parent.hint.additional;
  return next === undefined ? undefined : resolve(next, value);
}

/** The property names an object takes. */
export const propertyNames = (hint: ValidationHint): string[] => (hint.properties ?? []).map(([name]) => name);

/** Whether a key passes a map's key rule (the Metadata key rule: length and pattern). */
export function nameAllowed(rule: KeyRule | undefined, key: string): boolean {
  const length = [...key].length;
  for (const check of rule?.checks ?? []) {
    if (check.minLength !== undefined && length < check.minLength) return false;
    if (check.maxLength !== undefined && length > check.maxLength) return false;
    if (check.pattern !== undefined && !new RegExp(check.pattern, "u").test(key)) return false;
  }
  return true;
}
