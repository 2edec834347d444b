import { notFound } from "./errors.ts";

// Every object belongs to one environment, sandbox or production (its `livemode`), and a caller sees
// only its own key's: an id from the other environment answers 404, never 403, because for that caller
// the object does not exist (the contract's NotFound; docs/api.md "Authentication, scopes and environments").
// The check is a security rule, so it is written once, here.

/**
 * `found` when it exists in the caller's environment; otherwise a 404 naming `what` and `id` (and
 * `param`, the request field the id came from).
 */
export function inEnvironment<T extends { livemode: boolean }>(
  found: T | null | undefined,
  livemode: boolean,
  what: string,
  id: string,
  param = "id",
): T {
  if (!found || found.livemode !== livemode) throw notFound(what, id, param);
  return found;
}

/**
 * The sandbox helpers (spec/resources/sandbox.tsp) do not exist in production: a production key gets the
 * same 404 an unknown id gets.
 */
export function sandboxOnly(livemode: boolean, what: string, id: string): void {
  if (livemode) throw notFound(what, id);
}
