import { describe, expect, it } from "vitest";
import type { PayoutRequest } from "../../domain/cashouts/payout-rail.ts";
import type { PayoutSubmission } from "./acquirer.ts";
import { createAdyenPayoutRail, HOLDER_UNKNOWN, type PayoutHolder } from "./payout-rail.ts";

// The payout port over Adyen's Payout API (payout-rail.ts): which destinations it refuses at creation,
// what it sends, and that the outcome waits for Adyen's notification.

const HOLDER: PayoutHolder = {
  email: "finance@shop.example",
  shopperReference: "mer_1",
  entityType: "Company",
  nationality: "DE",
  dateOfBirth: "1990-01-01",
};

const request = (destination: PayoutRequest["destination"]): PayoutRequest => ({
  idempotencyKey: "co_1:payout",
  cashoutId: "co_1",
  livemode: true,
  amount: 5000,
  currency: "eur",
  destination,
});

const IBAN = { type: "iban", iban: "DE89370400440532013000", account_holder: "Shop GmbH" } as const;

describe("the Adyen payout rail", () => {
  it("refuses every destination but an IBAN, and an IBAN while the holder is unknown", () => {
    const sent: PayoutSubmission[] = [];
    const acquirer = { payout: async (r: PayoutSubmission) => (sent.push(r), { reference: "PSP_PO" }) };
    const known = createAdyenPayoutRail(acquirer, { holderFor: async () => HOLDER });
    expect(known.refuses(true, IBAN)).toBeNull();
    expect(known.refuses(true, { type: "pix", key: "a@b.example" } as never)).toMatch(/IBAN only; a pix destination/);
    expect(createAdyenPayoutRail(acquirer).refuses(true, IBAN)).toBe(HOLDER_UNKNOWN);
  });

  it("sends the payout with its key and holder, and waits for Adyen's notification", async () => {
    const sent: PayoutSubmission[] = [];
    const acquirer = { payout: async (r: PayoutSubmission) => (sent.push(r), { reference: "PSP_PO" }) };
    const rail = createAdyenPayoutRail(acquirer, { holderFor: async () => HOLDER });
    expect(await rail.send(request(IBAN))).toEqual({ reference: "PSP_PO" });
    expect(sent[0]).toMatchObject({ idempotencyKey: "co_1:payout", cashoutId: "co_1", holder: HOLDER });
    expect(await rail.outcome({ ...request(IBAN), reference: "PSP_PO" })).toEqual({ status: "in_transit" });
    await expect(createAdyenPayoutRail(acquirer).send(request(IBAN))).rejects.toThrow(HOLDER_UNKNOWN);
    expect(sent).toHaveLength(1);
  });
});
