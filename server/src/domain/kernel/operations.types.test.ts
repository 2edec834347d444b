import { OPERATIONS } from "@payments/contract/operations";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { Caller } from "./caller.ts";
import type {
  AuthenticatedOperationId,
  HandlerKit,
  Handlers,
  OperationInput,
  PublicOperationId,
} from "./operations.ts";

// A handler's `caller` is there exactly when the contract asks for a key (kernel/operations.ts
// OperationInput): each `@ts-expect-error` below is a read `tsc` must refuse (were it accepted, the
// directive itself would fail `tsc -p server`). The functions are never called; the test only keeps them
// type-checked with the rest of the suite.

declare const payment: OperationInput<"payPaymentLink">;
declare const notifications: OperationInput<"receiveAdyenNotifications">;
declare const charge: OperationInput<"createCharge">;
declare const kit: HandlerKit;

function publicReadsUnchecked() {
  return [
    // @ts-expect-error a public operation (security: []) has no caller: reading one unchecked fails
    payment.caller.livemode,
    // @ts-expect-error nor may it hand one to a use case that needs a Caller
    ((caller: Caller) => caller)(notifications.caller),
    // @ts-expect-error answer() records the caller's outcome: it takes only authenticated operations
    kit.answer<"payPaymentLink", unknown>(
      201,
      () => ({}) as never,
      async () => ({}),
    ),
  ];
}

function publicHandlerReadsUnchecked(): Partial<Handlers> {
  return {
    getLiveness: async (input) => {
      // @ts-expect-error a public handler's caller is undefined
      const livemode: boolean = input.caller.livemode;
      return { status: 200, body: { status: livemode ? "ok" : "ok" } };
    },
  };
}

function authenticatedNeedsNoCheck(): boolean[] {
  return [charge.caller.livemode, payment.caller === undefined];
}

describe("a handler's caller (type test)", () => {
  it("is there for an authenticated operation and never for a public one (checked by tsc)", () => {
    const checks = [publicReadsUnchecked, publicHandlerReadsUnchecked, authenticatedNeedsNoCheck];
    expect(checks.every((f) => typeof f === "function")).toBe(true);
  });

  it("follows the contract: the public operations are those with `security: []`", () => {
    expectTypeOf<PublicOperationId>().toEqualTypeOf<
      "getLiveness" | "getReadiness" | "receiveAdyenNotifications" | "payPaymentLink"
    >();
    expectTypeOf<"createCharge">().toExtend<AuthenticatedOperationId>();
    const isPublic = (id: string): id is PublicOperationId =>
      ["getLiveness", "getReadiness", "receiveAdyenNotifications", "payPaymentLink"].includes(id);
    expect(OPERATIONS.filter((op) => op.public).map((op) => op.operationId)).toEqual(
      OPERATIONS.map((op) => op.operationId).filter(isPublic),
    );
  });
});
