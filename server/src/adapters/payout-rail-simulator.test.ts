import { describe, expect, it } from "vitest";
import { type Destination, type DestinationInput, validateDestination } from "../domain/cashouts/destinations.ts";
import { FAILURE_MESSAGES } from "../domain/cashouts/payout-rail.ts";
import type { CashoutFailureCode } from "../domain/cashouts/records.ts";
import { createSimulatorPayoutRail, FAILING_DESTINATIONS, simulatedFailure } from "./payout-rail-simulator.ts";

// The payout simulator (docs/cashouts.md "Sandbox helpers and magic destinations"): each documented magic destination passes its
// kind's validation and always fails with its code; every other destination is paid; sending is
// idempotent per cashout.

const CURRENCY: Record<string, string> = { iban: "EUR", us_bank_account: "USD", pix: "BRL", clabe: "MXN" };

function inputFor(type: string, account: string): DestinationInput {
  switch (type) {
    case "iban":
      return { type: "iban", iban: account, account_holder: "A" };
    case "us_bank_account":
      return { type: "us_bank_account", routing_number: "110000000", account_number: account, account_holder: "A" };
    case "pix":
      return { type: "pix", key: account };
    default:
      return { type: "clabe", clabe: account, account_holder: "A" };
  }
}

describe("the payout simulator", () => {
  it("fails every documented magic destination with its code; each is a valid destination of its kind", async () => {
    const rail = createSimulatorPayoutRail();
    const documented: Record<string, CashoutFailureCode> = {
      "iban:DE41370400440000000001": "account_closed",
      "iban:DE14370400440000000002": "no_account",
      "us_bank_account:000111111113": "account_closed",
      "us_bank_account:000111111116": "no_account",
      "pix:account.closed@example.com": "account_closed",
      "pix:no.account@example.com": "no_account",
      "clabe:002010000000000014": "account_closed",
      "clabe:002010000000000027": "no_account",
    };
    expect(FAILING_DESTINATIONS).toEqual(documented);
    for (const [key, code] of Object.entries(documented)) {
      const [type = "", account = ""] = key.split(":");
      const destination = validateDestination(inputFor(type, account), CURRENCY[type] ?? "");
      expect(simulatedFailure(destination), key).toBe(code);
      const request = {
        idempotencyKey: "co_x:payout",
        cashoutId: "co_x",
        merchantId: "mch_x",
        livemode: false,
        amount: 1,
        currency: "USD",
        destination,
      };
      const outcome = await rail.outcome({ ...request, reference: "sim_po_x" });
      expect(outcome).toEqual({ status: "failed", failureCode: code, failureMessage: FAILURE_MESSAGES[code] });
    }
  });

  it("pays any other destination", async () => {
    const rail = createSimulatorPayoutRail();
    const destination: Destination = { type: "iban", iban: "DE89370400440532013000", account_holder: "A" };
    expect(simulatedFailure(destination)).toBeUndefined();
    const request = {
      idempotencyKey: "co_y:payout",
      cashoutId: "co_y",
      merchantId: "mch_y",
      livemode: true,
      amount: 1,
      currency: "EUR",
      destination,
    };
    expect(await rail.outcome({ ...request, reference: "r" })).toEqual({ status: "paid" });
  });

  it("sends idempotently: the same cashout always gets the same reference, another cashout another", async () => {
    const rail = createSimulatorPayoutRail();
    const destination: Destination = { type: "pix", key: "12345678909", key_type: "cpf" };
    const request = (cashoutId: string) => ({
      idempotencyKey: `${cashoutId}:payout`,
      cashoutId,
      merchantId: "mch_z",
      livemode: false,
      amount: 1,
      currency: "BRL",
      destination,
    });
    const first = await rail.send(request("co_a"));
    expect(first.reference).toMatch(/^sim_po_[0-9a-f]{16}$/);
    expect(await rail.send(request("co_a"))).toEqual(first);
    expect((await rail.send(request("co_b"))).reference).not.toBe(first.reference);
  });

  it("words every failure for the merchant, each its own way", () => {
    const messages = Object.values(FAILURE_MESSAGES);
    expect(Object.keys(FAILURE_MESSAGES).sort()).toEqual([
      "account_closed",
      "could_not_process",
      "declined",
      "no_account",
    ]);
    expect(messages.every((m) => m.length > 10)).toBe(true);
    expect(new Set(messages).size).toBe(messages.length);
  });
});
