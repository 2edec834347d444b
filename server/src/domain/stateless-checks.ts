import type { components } from "@payments/contract/types";
import type { OperationId } from "./kernel/operations.ts";
import { validateCard } from "./vault/card.ts";

// Rules of an operation's request that a use case applies without reading the store, for a front that
// has no store: the sandbox mock's (http/front.ts createStatelessFront), so that it refuses what the
// server refuses, with the same function and words. The use cases keep calling these themselves; this
// table only lets the mock call the same ones. A rule here runs before the mock answers, at the time
// of the real clock (the mock has no sandbox clock to move).

export type StatelessCheck = (body: unknown, now: Date) => void;

export const STATELESS_CHECKS: Partial<Record<OperationId, StatelessCheck>> = {
  // POST /v1/tokens: the card number's digits, length, Luhn check and brand, the expiry, the CVC (vault/tokens.ts create).
  createToken: (body, now) => {
    validateCard(body as components["schemas"]["TokenCreate"], now);
  },
};
