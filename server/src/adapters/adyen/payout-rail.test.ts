import { describe, expect, it } from "vitest";
import type { PayoutRequest } from "../../domain/cashouts/payout-rail.ts";
import type { PayoutSubmission } from "./acquirer.ts";
import { createAdyenPayoutRail, HOLDER_MISSING } from "./payout-rail.ts";

// The payout port over Adyen's Payout API (payout-rail.ts): which destinations it refuses at creation,
// the holder it sends, the two calls with their derived keys, and that the outcome waits for Adyen's
// notification.

const HOLDER = {
  entity_type: "company",
  email: "finance@shop.example",
  nationality: "DE",
  date_of_birth: "1990-01-01",
} as const;
const IBAN = { type: "iban", iban: "DE89370400440532013000", account_holder: "Shop GmbH", holder: HOLDER } as const;

const request = (destination: PayoutRequest["destination"]): PayoutRequest => ({
  idempotencyKey: "co_1:payout",
  cashoutId: "co_1",
  merchantId: "mch_1",
  livemode: true,
  amount: 5000,
  currency: "eur",
  destination,
});

function fakeAcquirer() {
  const calls: Array<["payout", PayoutSubmission] | ["confirm", { idempotencyKey: string; reference: string }]> = [];
  return {
    calls,
    payout: async (r: PayoutSubmission) => {
      calls.push(["payout", r]);
      return { reference: "PSP_PO" };
    },
    confirmPayout: async (r: { idempotencyKey: string; reference: string }) => {
      calls.push(["confirm", r]);
    },
  };
}

describe("the Adyen payout rail", () => {
  it("refuses every destination but an IBAN (naming destination.type), and an IBAN without its holder (destination.holder)", () => {
    const rail = createAdyenPayoutRail(fakeAcquirer());
    expect(rail.refuses(true, IBAN)).toBeNull();
    expect(rail.refuses(true, { type: "pix", key: "a@b.example", key_type: "email" })).toMatchObject({
      param: "destination.type",
      reason: expect.stringMatching(/IBAN only; a pix destination/),
    });
    const { holder: _, ...bare } = IBAN;
    expect(rail.refuses(true, bare)).toEqual({ param: "destination.holder", reason: HOLDER_MISSING });
  });

  it("submits with the cashout's key and the holder's identity, then confirms with its own derived key", async () => {
    const acquirer = fakeAcquirer();
    const rail = createAdyenPayoutRail(acquirer);
    expect(await rail.send(request(IBAN))).toEqual({ reference: "PSP_PO" });
    expect(acquirer.calls).toEqual([
      [
        "payout",
        expect.objectContaining({
          idempotencyKey: "co_1:payout",
          cashoutId: "co_1",
          holder: {
            email: "finance@shop.example",
            shopperReference: "mch_1",
            entityType: "Company",
            nationality: "DE",
            dateOfBirth: "1990-01-01",
          },
        }),
      ],
      ["confirm", { idempotencyKey: "co_1:payout:confirm", reference: "PSP_PO" }],
    ]);
    // Sent again (a crash before the reference was recorded): the same keys, so Adyen pays once.
    await rail.send(request(IBAN));
    expect(acquirer.calls.slice(2).map(([, r]) => r.idempotencyKey)).toEqual(["co_1:payout", "co_1:payout:confirm"]);
    expect(await rail.outcome({ ...request(IBAN), reference: "PSP_PO" })).toEqual({ status: "in_transit" });
  });

  it("maps an individual to Adyen's NaturalPerson, and never sends a payout it would refuse", async () => {
    const acquirer = fakeAcquirer();
    const rail = createAdyenPayoutRail(acquirer);
    await rail.send(request({ ...IBAN, holder: { ...HOLDER, entity_type: "individual" } }));
    expect(acquirer.calls[0]?.[1]).toMatchObject({ holder: { entityType: "NaturalPerson" } });
    const { holder: _, ...bare } = IBAN;
    await expect(rail.send(request(bare))).rejects.toThrow(HOLDER_MISSING);
    expect(acquirer.calls).toHaveLength(2);
  });
});
