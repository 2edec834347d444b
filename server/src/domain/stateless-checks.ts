import type { components } from "@payments/contract/types";
import { type OperationId, page } from "./kernel/operations.ts";
import { validateCard } from "./vault/card.ts";

// Rules of an operation's request that a use case applies without reading the store, for a front that
// has no store: the sandbox mock's (http/front.ts createStatelessFront), so that it refuses what the
// server refuses, with the same function and words. The use cases keep calling these themselves; this
// table only lets the mock call the same ones. A rule here runs before the mock answers, at the time
// of the real clock (the mock has no sandbox clock to move).

/** What a check reads of a request: its body and its query (after the contract's validation). */
export interface CheckedRequest {
  body: unknown;
  query: Record<string, unknown>;
}

export type StatelessCheck = (request: CheckedRequest, now: Date) => void;

/** Every list operation's one-cursor rule (kernel/operations.ts page, which each list use case calls). */
export const listCheck: StatelessCheck = ({ query }) => {
  // The contract's validation, which runs first, made the query a list operation's (ListParameters): the
  // cast, as http/handlers.ts casts a handler's query for the same reason.
  page(query as Parameters<typeof page>[0]);
};

export const STATELESS_CHECKS: Partial<Record<OperationId, StatelessCheck>> = {
  // POST /v1/tokens: the card number's digits, length, Luhn check and brand, the expiry, the CVC (vault/tokens.ts create).
  createToken: ({ body }, now) => {
    // cast: as above, the contract's validation made the body a TokenCreate.
    validateCard(body as components["schemas"]["TokenCreate"], now);
  },
};
