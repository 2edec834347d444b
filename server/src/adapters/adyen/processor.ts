import type {
  AuthorizationResult,
  Confirmation,
  LocalMethod,
  NextAction,
  Processor,
} from "../../domain/charges/processor.ts";
import { invalid } from "../../domain/kernel/errors.ts";
import { type Acquirer, AcquirerRefused, AcquirerUnsupported } from "./acquirer.ts";

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
//   whose issuer asks for a challenge is declined here with `processing_error` and a message saying so:
//   the payer's redirect back through our challenge step is not wired yet (docs/going-live-with-adyen.md
//   "What is not supported"), and Adyen expires the unfinished payment; nothing is authorized.
// - A local method Adyen does not offer (SPEI), or one whose payer data our charges do not carry yet
//   (boleto: the payer's name, CPF/CNPJ and address), is refused with a 400 naming `payment_method.type`:
//   never simulated.

export interface AdyenProcessorOptions {
  /** Where Adyen sends the payer back after a redirect (Adyen requires one on every /payments call). */
  returnUrl: (chargeId: string) => string;
}

/** The message of a card authorization that needs a 3-D Secure challenge, which this connector cannot finish yet. */
export const CHALLENGE_NOT_SUPPORTED =
  "The card's issuer asked for a 3-D Secure challenge, which this server cannot complete through Adyen yet; nothing was charged.";

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
          returnUrl: options.returnUrl(request.chargeId),
        });
      } catch (error) {
        // Adyen refused the request itself (4xx): nothing was authorized, and sending it again will not
        // help. The charge is declined; Adyen's reason is logged by the caller's error, not shown.
        if (error instanceof AcquirerRefused) {
          return {
            approved: false,
            failureCode: "processing_error",
            failureMessage: "The acquirer refused the payment request; nothing was charged.",
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
          return { approved: false, failureCode: "processing_error", failureMessage: CHALLENGE_NOT_SUPPORTED };
        case "pending":
          // A card authorization Adyen has not decided: in doubt until its AUTHORISATION notification. The
          // intent stays open; sending the same key again later gets Adyen's answer (docs/acquirer-port.md).
          throw new Error(
            `Adyen has not decided the card authorization ${answer.reference} yet (Received/Pending); its intent stays open`,
          );
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

    refund(request) {
      return received(
        acquirer.refund({
          idempotencyKey: request.idempotencyKey,
          reference: request.reference,
          merchantReference: request.idempotencyKey,
          amount: request.amount,
          currency: request.currency,
        }),
      );
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
      // authenticateCard never gives a challenge, so no charge of this acquirer waits for one.
      throw new Error("Adyen's 3-D Secure challenges are not completed through this server yet");
    },

    async startLocalPayment(request): Promise<NextAction> {
      try {
        const started = await acquirer.startLocalPayment({
          ...request,
          iban: request.iban?.replace(/\s+/g, ""),
          returnUrl: options.returnUrl(request.chargeId),
          // SEPA Direct Debit's account holder, as the payer gave it (Adyen's `ownerName`).
          ...(request.accountHolder === undefined ? {} : { payer: { firstName: request.accountHolder } }),
        });
        // next_action.reference is what the payer needs: a voucher's number (OXXO), else Adyen's
        // pspReference. The AUTHORISATION notification that settles the charge names it by its
        // merchantReference, which is the charge id (connector.ts sends it as Adyen's `reference`).
        return started.nextAction;
      } catch (error) {
        if (error instanceof AcquirerUnsupported) throw unsupportedMethod(request.method, error.message);
        throw error;
      }
    },
  };
}

function unsupportedMethod(method: LocalMethod, why: string) {
  return invalid(
    "payment_method.type",
    `${method} payments are not available through this server's acquirer (Adyen): ${why}. Nothing was charged.`,
  );
}
