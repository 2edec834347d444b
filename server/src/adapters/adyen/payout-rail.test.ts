import { describe, expect, it } from "vitest";
import type { PayoutRequest } from "../../domain/cashouts/payout-rail.ts";
import { PayoutRefused } from "../../domain/cashouts/payout-rail.ts";
import { AcquirerInDoubt, AcquirerRefused, type PayoutSubmission } from "./acquirer.ts";
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

type Keyed = { idempotencyKey: string; reference: string };
type Answer = "ok" | "refused" | "doubt";

/** A fake acquirer recording its calls; each operation answers by its script (default "ok"). */
function fakeAcquirer(script: { payout?: Answer; confirm?: Answer; decline?: Answer } = {}) {
  const calls: Array<["payout", PayoutSubmission] | ["confirm", Keyed] | ["decline", Keyed]> = [];
  const answer = (what: Answer | undefined) => {
    if (what === "refused") throw new AcquirerRefused(422, "137", "Adyen refused it (HTTP 422, error 137): Invalid");
    if (what === "doubt") throw new AcquirerInDoubt("Adyen: HTTP 500");
  };
  return {
    calls,
    payout: async (r: PayoutSubmission) => {
      calls.push(["payout", r]);
      answer(script.payout);
      return { reference: "PSP_PO" };
    },
    confirmPayout: async (r: Keyed) => {
      calls.push(["confirm", r]);
      answer(script.confirm);
    },
    declinePayout: async (r: Keyed) => {
      calls.push(["decline", r]);
      answer(script.decline);
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

  it("a refused submission is PayoutRefused (nothing was submitted): shown with Adyen's status and code, not its text", async () => {
    const acquirer = fakeAcquirer({ payout: "refused" });
    const error = await createAdyenPayoutRail(acquirer)
      .send(request(IBAN))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayoutRefused);
    expect(error).toMatchObject({
      failureMessage:
        "The acquirer refused the payout (HTTP 422, Adyen error 137); nothing was paid, and the amount is available again.",
    });
    expect(acquirer.calls.map(([op]) => op)).toEqual(["payout"]);
  });

  it("a refused confirmation declines the submission under its own key, then is PayoutRefused", async () => {
    const acquirer = fakeAcquirer({ confirm: "refused" });
    const error = await createAdyenPayoutRail(acquirer)
      .send(request(IBAN))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayoutRefused);
    expect(error).toMatchObject({
      failureMessage: expect.stringMatching(/refused the payout's confirmation \(HTTP 422/),
    });
    expect(acquirer.calls.slice(1)).toEqual([
      ["confirm", { idempotencyKey: "co_1:payout:confirm", reference: "PSP_PO" }],
      ["decline", { idempotencyKey: "co_1:payout:decline", reference: "PSP_PO" }],
    ]);
  });

  it("never PayoutRefused while the payout might still be paid: in doubt, or a decline Adyen refuses too", async () => {
    for (const script of [
      { payout: "doubt" },
      { confirm: "doubt" },
      { confirm: "refused", decline: "doubt" },
      { confirm: "refused", decline: "refused" },
    ] as const) {
      const error = await createAdyenPayoutRail(fakeAcquirer(script))
        .send(request(IBAN))
        .catch((e: unknown) => e);
      expect(error, JSON.stringify(script)).toBeInstanceOf(Error);
      expect(error, JSON.stringify(script)).not.toBeInstanceOf(PayoutRefused);
    }
  });
});
