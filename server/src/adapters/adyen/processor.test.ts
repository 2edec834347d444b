import { describe, expect, it } from "vitest";
import type { CardAuthorizationRequest } from "../../domain/charges/processor.ts";
import { DomainError } from "../../domain/kernel/errors.ts";
import {
  type Acquirer,
  AcquirerInDoubt,
  AcquirerRefused,
  AcquirerUnsupported,
  type Authorization,
} from "./acquirer.ts";
import { CHALLENGE_NOT_SUPPORTED, createAdyenProcessor } from "./processor.ts";

// The Processor port over the Adyen connector (processor.ts): what each port call sends the connector and
// how each answer comes back. The connector's own calls to Adyen are tested against the stand-in
// (test/adyen/connector.test.ts); the wired server against it in the e2e suites (test/vitest.adyen.config.ts).

const NOW = new Date("2026-11-27T12:00:00Z");

function fakeAcquirer(answer: () => Promise<Authorization>) {
  const calls: Array<[string, Record<string, unknown>]> = [];
  const received = (name: string) => async (request: object) => {
    calls.push([name, request as Record<string, unknown>]);
    return { status: "received" as const, reference: `PSP_${name}` };
  };
  const acquirer = {
    authorizeCard: async (request: object) => {
      calls.push(["authorizeCard", request as Record<string, unknown>]);
      return answer();
    },
    capture: received("capture"),
    cancel: received("cancel"),
    refund: received("refund"),
    reverse: received("reverse"),
    startLocalPayment: async (request: { method: string; chargeId: string }) => {
      calls.push(["startLocalPayment", request as unknown as Record<string, unknown>]);
      if (request.method === "spei") throw new AcquirerUnsupported("method:spei", "Adyen does not offer spei payments");
      if (request.method === "oxxo") throw new AcquirerRefused(422, "14_030", "Adyen refused the oxxo payment");
      return {
        reference: "PSP_local",
        nextAction: { type: "display_qr_code" as const, reference: "PSP_local", expires_at: NOW.toISOString() },
      };
    },
  } as unknown as Acquirer;
  const processor = createAdyenProcessor(acquirer, { returnUrl: (id) => `https://pay.example/3ds/${id}/return` });
  return { processor, calls };
}

const card = (overrides: Partial<CardAuthorizationRequest> = {}): CardAuthorizationRequest => ({
  idempotencyKey: "tx_1:authorize",
  chargeId: "tx_1",
  pan: "4111111145551142",
  expMonth: 3,
  expYear: 2030,
  amount: 1000,
  currency: "eur",
  capture: true,
  livemode: true,
  now: NOW,
  ...overrides,
});

describe("the Adyen processor", () => {
  it("authorizes with the port's key, the capture mode and a return address, and maps the answer", async () => {
    const { processor, calls } = fakeAcquirer(async () => ({ status: "authorized", reference: "PSP1" }));
    expect(await processor.authorizeCard(card())).toEqual({ approved: true, reference: "PSP1", captured: true });
    expect(await processor.authorizeCard(card({ capture: false }))).toEqual({
      approved: true,
      reference: "PSP1",
      captured: false,
    });
    expect(calls[0]?.[1]).toMatchObject({
      idempotencyKey: "tx_1:authorize",
      capture: "immediate",
      returnUrl: "https://pay.example/3ds/tx_1/return",
    });
    expect(calls[1]?.[1]).toMatchObject({ capture: "manual" });
  });

  it("declines as Adyen declined, and a request Adyen refused as a processing error", async () => {
    const declined = fakeAcquirer(async () => ({
      status: "declined",
      failureCode: "insufficient_funds",
      failureMessage: "The card has insufficient funds.",
    }));
    expect(await declined.processor.authorizeCard(card())).toEqual({
      approved: false,
      failureCode: "insufficient_funds",
      failureMessage: "The card has insufficient funds.",
    });
    const refused = fakeAcquirer(async () => {
      throw new AcquirerRefused(
        422,
        "101",
        "Adyen refused the card payment (HTTP 422, error 101): Invalid card number",
      );
    });
    const answer = await refused.processor.authorizeCard(card());
    // Marked as the request refused, not the card: on a repeat under the same key it proves nothing.
    expect(answer).toMatchObject({ approved: false, failureCode: "processing_error", requestRefused: true });
    // Adyen's own words stay out of what merchants see.
    expect(JSON.stringify(answer)).not.toContain("101");
  });

  it("answers a GET redirect challenge as the acquirer's challenge; a form-post one is declined, saying why", async () => {
    const challenge = (method: "GET" | "POST") =>
      fakeAcquirer(async () => ({
        status: "requires_action",
        reference: "PSP3",
        action: { type: "redirect_to_url", url: "https://issuer.example/challenge", method },
      }));
    const { processor, calls } = challenge("GET");
    expect(await processor.authorizeCard(card({ returnUrl: "https://pay.example/3ds/tx_1/return?t=tok" }))).toEqual({
      approved: false,
      challenge: { url: "https://issuer.example/challenge", reference: "PSP3", version: "2.2.0" },
    });
    // The return address the charges area gives (with its token) is the one Adyen is sent.
    expect(calls[0]?.[1]).toMatchObject({ returnUrl: "https://pay.example/3ds/tx_1/return?t=tok" });
    expect(await challenge("POST").processor.authorizeCard(card())).toEqual({
      approved: false,
      failureCode: "processing_error",
      failureMessage: CHALLENGE_NOT_SUPPORTED,
    });
    expect(await processor.authenticateCard({} as never)).toEqual({ kind: "not_needed" });
  });

  it("completes a challenge with /payments/details under the intent's key and maps the issuer's result", async () => {
    const completing = (answer: () => Promise<Authorization>) => {
      const details: Array<Record<string, unknown>> = [];
      const acquirer = {
        completeAuthentication: async (request: Record<string, unknown>) => {
          details.push(request);
          return answer();
        },
      } as unknown as Acquirer;
      const processor = createAdyenProcessor(acquirer, { returnUrl: () => "" });
      return { processor, details };
    };
    const request = { idempotencyKey: "tx_1:authenticate", chargeId: "tx_1", redirectResult: "X6Xt", capture: true };

    const ok = completing(async () => ({
      status: "authorized",
      reference: "PSP3",
      authentication: { transStatus: "Y", eci: "05", version: "2.2.0" },
    }));
    expect(await ok.processor.completeAuthentication?.(request)).toEqual({
      authorization: { approved: true, reference: "PSP3", captured: true },
      threeDSecure: { result: "authenticated", version: "2.2.0", liabilityShift: true, eci: "05" },
    });
    expect(ok.details).toEqual([{ idempotencyKey: "tx_1:authenticate", redirectResult: "X6Xt" }]);

    const refused = completing(async () => ({
      status: "declined",
      reference: "PSP3",
      failureCode: "authentication_failed",
      failureMessage: "The payer did not complete 3-D Secure authentication.",
    }));
    expect(await refused.processor.completeAuthentication?.({ ...request, capture: false })).toEqual({
      authorization: {
        approved: false,
        failureCode: "authentication_failed",
        failureMessage: "The payer did not complete 3-D Secure authentication.",
      },
      threeDSecure: { result: "failed", version: "2.2.0", liabilityShift: false, eci: null },
    });

    // Received / Pending after the challenge: undecided, with the issuer's result; AUTHORISATION decides it.
    const received = completing(async () => ({
      status: "pending",
      reference: "PSP3",
      authentication: { transStatus: "Y", eci: "05", version: "2.2.0" },
    }));
    expect(await received.processor.completeAuthentication?.(request)).toEqual({
      authorization: { approved: false, undecided: { reference: "PSP3" } },
      threeDSecure: { result: "authenticated", version: "2.2.0", liabilityShift: true, eci: "05" },
    });

    // Adyen refused the result itself: declined, nothing charged; in doubt is left to the intent.
    const invalid = completing(async () => {
      throw new AcquirerRefused(
        422,
        "101",
        "Adyen refused the 3-D Secure completion (HTTP 422): Invalid redirectResult",
      );
    });
    expect(await invalid.processor.completeAuthentication?.(request)).toMatchObject({
      authorization: { approved: false, failureCode: "processing_error" },
      threeDSecure: { result: "processing_error", liabilityShift: false },
    });
    const doubt = completing(async () => {
      throw new AcquirerInDoubt("Adyen the 3-D Secure completion: timed out");
    });
    await expect(doubt.processor.completeAuthentication?.(request)).rejects.toBeInstanceOf(AcquirerInDoubt);
  });

  it("leaves a call in doubt to the intent (it throws), and answers an undecided authorization undecided", async () => {
    const doubt = fakeAcquirer(async () => {
      throw new AcquirerInDoubt("Adyen the card payment: timed out");
    });
    await expect(doubt.processor.authorizeCard(card())).rejects.toBeInstanceOf(AcquirerInDoubt);
    // Received / Pending: the charge is stored pending, and its AUTHORISATION notification decides it.
    const pending = fakeAcquirer(async () => ({ status: "pending", reference: "PSP4" }));
    expect(await pending.processor.authorizeCard(card())).toEqual({
      approved: false,
      undecided: { reference: "PSP4" },
    });
  });

  it("fails a refund Adyen refuses as a request (4xx), naming its status and code, not its text", async () => {
    const refused = createAdyenProcessor(
      {
        refund: async () => {
          throw new AcquirerRefused(422, "167", "Original pspReference required for this operation");
        },
      } as unknown as Acquirer, // cast: only refund is called below
      { returnUrl: () => "https://pay.example/return" },
    );
    expect(
      await refused.refund({ idempotencyKey: "re_1:refund", reference: "PSP1", amount: 100, currency: "eur" }),
    ).toEqual({
      status: "failed",
      reason: "the acquirer refused the refund request (HTTP 422, error code 167)",
      requestRefused: true,
    });
    // Anything else (a time-out, Adyen's 5xx) is not a refusal: it stays in doubt for recovery.
    const inDoubt = createAdyenProcessor(
      {
        refund: async () => {
          throw new AcquirerInDoubt("Adyen did not answer");
        },
      } as unknown as Acquirer, // cast: only refund is called below
      { returnUrl: () => "https://pay.example/return" },
    );
    await expect(
      inDoubt.refund({ idempotencyKey: "re_1:refund", reference: "PSP1", amount: 100, currency: "eur" }),
    ).rejects.toBeInstanceOf(AcquirerInDoubt);
  });

  it("sends captures, voids, refunds and reversals under the intent's key and reference, pending their notification", async () => {
    const { processor, calls } = fakeAcquirer(async () => ({ status: "authorized", reference: "PSP1" }));
    const key = (operation: string) => `tx_1:${operation}`;
    expect(
      await processor.capture({ idempotencyKey: key("capture"), reference: "PSP1", amount: 400, currency: "eur" }),
    ).toEqual({ status: "pending" });
    expect(await processor.void({ idempotencyKey: key("void"), reference: "PSP1" })).toEqual({ status: "pending" });
    expect(
      await processor.refund({ idempotencyKey: "re_1:refund", reference: "PSP1", amount: 100, currency: "eur" }),
    ).toEqual({ status: "pending" });
    expect(await processor.reverse({ idempotencyKey: key("reverse"), reference: "PSP1" })).toEqual({
      status: "pending",
    });
    expect(calls).toEqual([
      [
        "capture",
        {
          idempotencyKey: "tx_1:capture",
          reference: "PSP1",
          merchantReference: "tx_1:capture",
          amount: 400,
          currency: "eur",
        },
      ],
      ["cancel", { idempotencyKey: "tx_1:void", reference: "PSP1", merchantReference: "tx_1:void" }],
      [
        "refund",
        {
          idempotencyKey: "re_1:refund",
          reference: "PSP1",
          merchantReference: "re_1:refund",
          amount: 100,
          currency: "eur",
        },
      ],
      ["reverse", { idempotencyKey: "tx_1:reverse", reference: "PSP1", merchantReference: "tx_1:reverse" }],
    ]);
  });

  it("starts a local payment with its holder, and refuses a method Adyen lacks with a 400 naming the field", async () => {
    const { processor, calls } = fakeAcquirer(async () => ({ status: "authorized", reference: "PSP1" }));
    const local = {
      idempotencyKey: "tx_2:start_local",
      chargeId: "tx_2",
      amount: 1000,
      currency: "eur",
      now: NOW,
    } as const;
    await processor.startLocalPayment({
      ...local,
      method: "sepa_debit",
      iban: "DE89 3704 0044 0532 0130 00",
      accountHolder: "Ada Lovelace",
    });
    expect(calls[0]?.[1]).toMatchObject({
      iban: "DE89370400440532013000",
      payer: { firstName: "Ada Lovelace" },
      returnUrl: "https://pay.example/3ds/tx_2/return",
    });
    // The return address the charge's intent kept, when given: the same on every attempt, whatever BASE_URL says.
    await processor.startLocalPayment({
      ...local,
      method: "pix",
      returnUrl: "https://old.example/3ds/tx_2/return?t=a",
    });
    expect(calls[1]?.[1]).toMatchObject({ returnUrl: "https://old.example/3ds/tx_2/return?t=a" });
    const refused = await processor.startLocalPayment({ ...local, method: "spei" }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: "invalid_request", param: "payment_method.type" });
    expect((refused as Error).message).toMatch(/spei payments are not available.*Adyen/);
    // Refused as a request (a 4xx, or a `Refused` result): nothing started, a 400 naming the method (not a 500).
    const declined = await processor.startLocalPayment({ ...local, method: "oxxo" }).catch((error: unknown) => error);
    expect(declined).toBeInstanceOf(DomainError);
    expect(declined).toMatchObject({ code: "invalid_request", param: "payment_method" });
    expect((declined as Error).message).toMatch(/refused this oxxo payment \(its code 14_030\).*Nothing was charged/);
  });
});
