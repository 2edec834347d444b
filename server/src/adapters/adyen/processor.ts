import type {
  AuthenticationCompleted,
  AuthenticationReturn,
  AuthorizationResult,
  Confirmation,
  LocalMethod,
  NextAction,
  Processor,
  RefundConfirmation,
  ThreeDSecureOutcome,
} from "../../domain/charges/processor.ts";
import { invalid } from "../../domain/kernel/errors.ts";
import {
  type Acquirer,
  AcquirerRefused,
  AcquirerUnsupported,
  type AuthenticationSummary,
  type Authorization,
} from "./acquirer.ts";

// The Processor port (domain/charges/processor.ts) over the Adyen connector (./connector.ts): what the
// server wires as an environment's acquirer when PRODUCTION_ACQUIRER or SANDBOX_ACQUIRER is `adyen`
// (acquirers.ts). Every call carries the port's idempotency key (acquirerKey: `tx_…:authorize`,
// `tx_…:capture`, `re_…:refund`) as Adyen's Idempotency-Key, so a call repeated after a crash or a time-out
// gets Adyen's first answer and moves no more money.
//
// - A capture, void (Adyen's cancel), refund or reverse (Adyen's reversal) is only *received* by Adyen: it
//   answers `pending`, and Adyen's notification (CAPTURE, CANCELLATION, REFUND, CANCEL_OR_REFUND) settles
//   it later. Each is sent with our intent's id as Adyen's `reference` (merchantReference), so the
//   notification names the intent (collection acquirer_intents, id = that reference) and, by
//   `originalReference`, the charge (its processor_ref).
// - A call in doubt (AcquirerInDoubt: time-out, dropped connection, 5xx, 429) is thrown as is: the charge's
//   intent stays open and is resolved by a retry or the recovery job, under the same key.
// - 3-D Secure: Adyen runs it inside /payments, so `authenticateCard` asks nothing (not_needed). A card
//   whose issuer asks for a challenge (RedirectShopper / ChallengeShopper / IdentifyShopper with a GET
//   `redirect` action) answers `challenge`: the charge waits requires_action with the issuer's page as its
//   next_action. Adyen sends the payer back to our challenge step's return address (returnUrl, with its
//   token) with a `redirectResult`, and `completeAuthentication` finishes the payment with
//   /payments/details under the key `tx_…:authenticate` (docs/going-live-with-adyen.md "3-D Secure").
// - A local method Adyen does not offer (SPEI), or one whose payer data our charges do not carry yet
//   (boleto: the payer's name, CPF/CNPJ and address), is refused with a 400 naming `payment_method.type`:
//   never simulated.

export interface AdyenProcessorOptions {
  /** Where Adyen sends the payer back after a redirect (Adyen requires one on every /payments call). */
  returnUrl: (chargeId: string) => string;
}

/**
 * The message of a card whose issuer asks for a challenge by form post (the 3-D Secure 1 way, which card
 * brands have retired): the connector asks for the redirect flow, whose action is a GET.
 */
export const CHALLENGE_NOT_SUPPORTED =
  "The card's issuer asked for a 3-D Secure challenge by form post, which this server does not run through Adyen; nothing was charged.";

/** The version Adyen's redirect flow runs when it does not say (3-D Secure 2's current one). */
const DEFAULT_VERSION = "2.2.0";

/**
 * What the issuer said of the payer after Adyen's challenge. Adyen's `threeDS2Result.transStatus` when it
 * reports one (Y authenticated, A attempted, N/R failed, U could not be performed); otherwise the
 * payment's own outcome tells: authorized after a challenge means authenticated, and a refusal for
 * 3-D Secure (refusalReasonCode 11) failed. A challenged payment's liability shifts to the issuer when
 * authenticated or attempted, as the simulator's does.
 */
function outcomeOf(answer: Authorization, summary: AuthenticationSummary | undefined): ThreeDSecureOutcome {
  const byStatus: Record<string, ThreeDSecureOutcome["result"]> = {
    Y: "authenticated",
    A: "attempted",
    N: "failed",
    R: "failed",
    U: "processing_error",
  };
  const failed = answer.status === "declined" && answer.failureCode === "authentication_failed";
  const result = byStatus[summary?.transStatus ?? ""] ?? (failed ? "failed" : "authenticated");
  return {
    result,
    version: summary?.version ?? DEFAULT_VERSION,
    liabilityShift: result === "authenticated" || result === "attempted",
    eci: summary?.eci ?? null,
  };
}
export function createAdyenProcessor(acquirer: Acquirer, options: AdyenProcessorOptions): Processor {
  /** A modification Adyen received: settled later by its notification. */
  const received = async (send: Promise<unknown>): Promise<Confirmation> => {
    await send;
    return { status: "pending" };
  };

  return {
    async authorizeCard(request): Promise<AuthorizationResult> {
      let answer: Awaited<ReturnType<Acquirer["authorizeCard"]>>;
      try {
        answer = await acquirer.authorizeCard({
          ...request,
          capture: request.capture ? "immediate" : "manual",
          returnUrl: request.returnUrl ?? options.returnUrl(request.chargeId),
        });
      } catch (error) {
        // Adyen refused the request itself (4xx): nothing was authorized, and sending it again will not
        // help. The charge is declined; Adyen's reason is logged by the caller's error, not shown.
        if (error instanceof AcquirerRefused) {
          return {
            approved: false,
            failureCode: "processing_error",
            failureMessage: "The acquirer refused the payment request; nothing was charged.",
            requestRefused: true,
          };
        }
        throw error;
      }
      switch (answer.status) {
        case "authorized":
          return { approved: true, reference: answer.reference, captured: request.capture };
        case "declined":
          return { approved: false, failureCode: answer.failureCode, failureMessage: answer.failureMessage };
        case "requires_action":
          if (answer.action.method !== "GET") {
            return { approved: false, failureCode: "processing_error", failureMessage: CHALLENGE_NOT_SUPPORTED };
          }
          // Nothing is authorized yet: the payer answers the issuer's page, and their return finishes it.
          return {
            approved: false,
            challenge: { url: answer.action.url, reference: answer.reference ?? null, version: DEFAULT_VERSION },
          };
        case "pending":
          // A card authorization Adyen took and has not decided (Received/Pending): the charge is stored
          // `pending`, and its AUTHORISATION notification authorizes, captures or declines it.
          return { approved: false, undecided: { reference: answer.reference } };
      }
    },

    capture(request) {
      return received(
        acquirer.capture({
          idempotencyKey: request.idempotencyKey,
          reference: request.reference,
          merchantReference: request.idempotencyKey,
          amount: request.amount,
          currency: request.currency,
        }),
      );
    },

    void(request) {
      return received(
        acquirer.cancel({
          idempotencyKey: request.idempotencyKey,
          reference: request.reference,
          merchantReference: request.idempotencyKey,
        }),
      );
    },

    async refund(request): Promise<RefundConfirmation> {
      try {
        return await received(
          acquirer.refund({
            idempotencyKey: request.idempotencyKey,
            reference: request.reference,
            merchantReference: request.idempotencyKey,
            amount: request.amount,
            currency: request.currency,
          }),
        );
      } catch (error) {
        // Adyen refused the refund request itself (4xx: e.g. a payment it will not refund): nothing was
        // refunded, and sending it again will not help (recovery used to resend it on every pass). The
        // refund fails and its money goes back to the merchant (refunds.ts). Adyen's status and code are
        // given, not its text, as for a refused payout.
        if (error instanceof AcquirerRefused) {
          const code = error.errorCode === undefined ? "" : `, error code ${error.errorCode}`;
          return {
            status: "failed",
            reason: `the acquirer refused the refund request (HTTP ${error.status}${code})`,
            requestRefused: true,
          };
        }
        throw error;
      }
    },

    reverse(request) {
      return received(
        acquirer.reverse({
          idempotencyKey: request.idempotencyKey,
          reference: request.reference,
          merchantReference: request.idempotencyKey,
        }),
      );
    },

    // Adyen authenticates inside /payments (authorizeCard above): there is nothing to ask beforehand.
    async authenticateCard() {
      return { kind: "not_needed" };
    },

    async completeChallenge() {
      // authenticateCard never gives a challenge: Adyen's are finished by completeAuthentication.
      throw new Error("Adyen's 3-D Secure challenges are completed by the payer's return (completeAuthentication)");
    },

    completeAuthentication: (request) => completeAuthentication(acquirer, request),

    async startLocalPayment(request): Promise<NextAction> {
      try {
        const started = await acquirer.startLocalPayment({
          ...request,
          iban: request.iban?.replace(/\s+/g, ""),
          returnUrl: request.returnUrl ?? options.returnUrl(request.chargeId),
          // SEPA Direct Debit's account holder, as the payer gave it (Adyen's `ownerName`).
          ...(request.accountHolder === undefined ? {} : { payer: { firstName: request.accountHolder } }),
        });
        // next_action.reference is what the payer needs: a voucher's number (OXXO), else Adyen's
        // pspReference. The AUTHORISATION notification that settles the charge names it by its
        // merchantReference, which is the charge id (connector.ts sends it as Adyen's `reference`).
        return started.nextAction;
      } catch (error) {
        if (error instanceof AcquirerUnsupported) throw unsupportedMethod(request.method, error.message);
        // Refused as a request (Adyen's 4xx, or a `Refused` result): nothing was started. A 400 naming the
        // method, as for one Adyen lacks; the charges area discards the start's intent (create.ts payLocally).
        if (error instanceof AcquirerRefused) throw refusedMethod(request.method, error);
        throw error;
      }
    },
  };
}

function refusedMethod(method: LocalMethod, error: AcquirerRefused) {
  const code = error.errorCode === undefined ? "" : ` (its code ${error.errorCode})`;
  return invalid(
    "payment_method",
    `The acquirer (Adyen) refused this ${method} payment${code}: check the payment method's details. Nothing was charged.`,
  );
}

function unsupportedMethod(method: LocalMethod, why: string) {
  return invalid(
    "payment_method.type",
    `${method} payments are not available through this server's acquirer (Adyen): ${why}. Nothing was charged.`,
  );
}

/**
 * The payer is back from the issuer's page: Adyen's /payments/details with their redirectResult, under the
 * intent's key (`tx_…:authenticate`), and what it answered as the port's outcome and three_d_secure.
 */
async function completeAuthentication(
  acquirer: Acquirer,
  request: AuthenticationReturn,
): Promise<AuthenticationCompleted> {
  let answer: Authorization;
  try {
    answer = await acquirer.completeAuthentication({
      idempotencyKey: request.idempotencyKey,
      redirectResult: request.redirectResult,
    });
  } catch (error) {
    // Adyen refused the payer's result itself (4xx: an invalid or spent redirectResult): nothing was
    // authorized, and sending it again will not help. An AcquirerInDoubt is thrown on: intent stays open.
    if (error instanceof AcquirerRefused) {
      return {
        authorization: {
          approved: false,
          failureCode: "processing_error",
          failureMessage: "The acquirer refused the payer's 3-D Secure result; nothing was charged.",
        },
        threeDSecure: { result: "processing_error", version: DEFAULT_VERSION, liabilityShift: false, eci: null },
      };
    }
    throw error;
  }
  const threeDSecure = outcomeOf(answer, "authentication" in answer ? answer.authentication : undefined);
  switch (answer.status) {
    case "authorized":
      return {
        authorization: { approved: true, reference: answer.reference, captured: request.capture },
        threeDSecure,
      };
    case "declined":
      return {
        authorization: { approved: false, failureCode: answer.failureCode, failureMessage: answer.failureMessage },
        threeDSecure,
      };
    case "requires_action":
      // A second challenge for the same payment: not a flow Adyen's redirect 3-D Secure has.
      return {
        authorization: {
          approved: false,
          failureCode: "processing_error",
          failureMessage:
            "The issuer asked for a second 3-D Secure step, which this server does not run; nothing was charged.",
        },
        threeDSecure: { ...threeDSecure, result: "processing_error", liabilityShift: false },
      };
    case "pending":
      // Received, not decided yet (Received / Pending): the charge is stored `pending` with Adyen's
      // pspReference, and its AUTHORISATION notification decides it, as for an authorization taken
      // undecided at creation (docs/going-live-with-adyen.md "3-D Secure").
      return { authorization: { approved: false, undecided: { reference: answer.reference } }, threeDSecure };
  }
}
