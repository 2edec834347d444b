import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CallLedger, startCallLedger } from "../support/adyen-stand-in/call-ledger.ts";
import { ADYEN_TEST_CREDENTIALS, type AdyenStandIn, startAdyenStandIn } from "../support/adyen-stand-in/index.ts";
import { eventually } from "../support/eventually.ts";

// The call ledger the Adyen crash suite counts with (support/adyen-stand-in/call-ledger.ts): that it
// records what the stand-in answered, that its double counts do see a double (so the crash suite's zeros
// mean something), and that each interception ends the call as it says. No Prism here: the ledger is
// the crash suite's instrument, not the connector's contract.

let standIn: AdyenStandIn;
let ledger: CallLedger;
beforeAll(async () => {
  standIn = await startAdyenStandIn(ADYEN_TEST_CREDENTIALS);
  ledger = await startCallLedger(standIn.url);
});
afterAll(async () => {
  await ledger?.stop();
  await standIn?.stop();
});

const payment = (reference: string) => ({
  merchantAccount: ADYEN_TEST_CREDENTIALS.merchantAccount,
  reference,
  amount: { value: 1000, currency: "USD" },
  paymentMethod: { type: "scheme", number: "4111111111111111", expiryMonth: "03", expiryYear: "2030" },
  returnUrl: "https://shop.example/return",
  additionalData: { manualCapture: "true" },
});

const post = (path: string, key: string, body: unknown, signal?: AbortSignal) =>
  fetch(`${ledger.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": ADYEN_TEST_CREDENTIALS.apiKey, "idempotency-key": key },
    body: JSON.stringify(body),
    signal,
  });

describe("the call ledger in front of the Adyen stand-in", () => {
  it("records each call with its key and PSP reference; a replay under its key is no double", async () => {
    const first = (await (await post("/payments", "tx_a:authorize", payment("tx_a"))).json()) as {
      pspReference: string;
    };
    const again = (await (await post("/payments", "tx_a:authorize", payment("tx_a"))).json()) as {
      pspReference: string;
    };
    expect(again.pspReference).toBe(first.pspReference);
    const calls = ledger.calls.filter((c) => c.merchantReference === "tx_a");
    expect(calls.map((c) => [c.operation, c.idempotencyKey, c.pspReference, c.status])).toEqual([
      ["payment", "tx_a:authorize", first.pspReference, 200],
      ["payment", "tx_a:authorize", first.pspReference, 200],
    ]);
    expect(standIn.performed.authorisation.get("tx_a")).toBe(1);
    expect(ledger.doubles()).toEqual({
      keys_with_two_psp_references: 0,
      authorizations: 0,
      captures: 0,
      cancels: 0,
      refunds: 0,
      reversals: 0,
    });
  });

  it("counts a charge authorized under two keys, and a payment captured twice", async () => {
    const { pspReference } = (await (await post("/payments", "tx_b:authorize", payment("tx_b"))).json()) as {
      pspReference: string;
    };
    await post("/payments", "tx_b:authorize-fresh", payment("tx_b"));
    const capture = (reference: string) => ({
      merchantAccount: ADYEN_TEST_CREDENTIALS.merchantAccount,
      reference,
      amount: { value: 500, currency: "USD" },
    });
    expect((await post(`/payments/${pspReference}/captures`, "k1", capture("tx_b:capture"))).status).toBe(201);
    expect((await post(`/payments/${pspReference}/captures`, "k2", capture("tx_b:capture-again"))).status).toBe(201);
    expect(ledger.doubles()).toMatchObject({ keys_with_two_psp_references: 0, authorizations: 1, captures: 1 });
  });

  it("ends a call as each interception says", async () => {
    let killed = 0;
    const kill = () => {
      killed++;
    };
    const count = () => standIn.payments.size;

    ledger.plan(1, { kind: "kill_before", run: kill });
    const before = count();
    await expect(post("/payments", "tx_c:authorize", payment("tx_c"))).rejects.toThrow();
    expect([killed, count() - before]).toEqual([1, 0]);

    ledger.plan(1, { kind: "kill_after", run: kill });
    await expect(post("/payments", "tx_d:authorize", payment("tx_d"))).rejects.toThrow();
    expect([killed, count() - before]).toEqual([2, 1]);

    ledger.plan(1, { kind: "drop" });
    await expect(post("/payments", "tx_e:authorize", payment("tx_e"))).rejects.toThrow();
    expect(count() - before).toBe(2);

    ledger.plan(1, { kind: "error_after" });
    expect((await post("/payments", "tx_f:authorize", payment("tx_f"))).status).toBe(500);
    expect(count() - before).toBe(3);

    ledger.plan(1, { kind: "error_before" });
    expect((await post("/payments", "tx_g:authorize", payment("tx_g"))).status).toBe(500);
    expect(count() - before).toBe(3);

    ledger.plan(1, { kind: "timeout" });
    await expect(post("/payments", "tx_h:authorize", payment("tx_h"), AbortSignal.timeout(300))).rejects.toThrow();
    // Processed all the same (the caller gave up first on a busy machine, perhaps before the stand-in answered).
    await eventually(
      "the held call to be processed",
      () => count() - before,
      (n) => n === 4,
    );

    // A plan for a call that never came is dropped, and the next call goes through.
    ledger.plan(2, { kind: "drop" });
    expect(ledger.clearPlans()).toBe(1);
    expect((await post("/payments", "tx_i:authorize", payment("tx_i"))).status).toBe(200);

    const byReference = (reference: string) => ledger.calls.find((c) => c.merchantReference === reference);
    expect(
      ["tx_c", "tx_d", "tx_e", "tx_f", "tx_g", "tx_h"].map((r) => [
        byReference(r)?.interception,
        byReference(r)?.status,
        byReference(r)?.pspReference !== undefined,
      ]),
    ).toEqual([
      ["kill_before", null, false],
      ["kill_after", 200, true],
      ["drop", 200, true],
      ["error_after", 200, true],
      ["error_before", null, false],
      ["timeout", 200, true],
    ]);
    expect(ledger.met).toEqual({ kill_before: 1, kill_after: 1, drop: 1, timeout: 1, error_after: 1, error_before: 1 });
  });
});
