import type { Destination } from "../../domain/cashouts/destinations.ts";
import {
  type PayoutRail,
  type PayoutRefusal,
  PayoutRefused,
  type PayoutRequest,
} from "../../domain/cashouts/payout-rail.ts";
import { type Acquirer, AcquirerRefused, type PayoutSubmission } from "./acquirer.ts";

// The payout port (domain/cashouts/payout-rail.ts) over Adyen's Payout API v50 (connector.ts `payout` and
// `confirmPayout`), for an environment whose acquirer is `adyen` (acquirers.ts payoutRailFor).
//
// - What Adyen's payout API pays: bank accounts by IBAN (`bank.iban`, `storeDetailAndSubmitThirdParty`).
//   A US bank account, a pix key or a CLABE is refused when the cashout is created (400 on
//   `destination.type`), never simulated: Payout v50 has no field for an ABA routing number or a pix key
//   that Adyen documents for payouts, and its `/payout` operation pays cards, which are not a cashout
//   destination here.
// - Payout v50 requires the account holder's identity (e-mail, entity type, nationality, date of birth):
//   it comes with the destination (`destination.holder`, PayoutAccountHolder in the contract), sealed with
//   the IBAN. An IBAN without it is refused at creation (400 on `destination.holder`). The shopper
//   reference Adyen keys the stored bank details by is the merchant's id.
// - A payout is two calls: submit (`storeDetailAndSubmitThirdParty`, Idempotency-Key `<cashout id>:payout`,
//   Adyen's `reference` the cashout id), then confirm (`confirmThirdParty` on the submission's
//   pspReference, Idempotency-Key `<cashout id>:payout:confirm`). Both keys are derived from the cashout,
//   so a crash anywhere between the claim and the recorded reference makes the payout job send both
//   again, which Adyen answers from its idempotency store without paying twice (payouts.ts settle).
// - Its outcome comes by notification (PAYOUT_THIRDPARTY, PAYOUT_DECLINE, PAYOUT_EXPIRE, PAIDOUT_REVERSED:
//   domain/acquirer-notifications), so `outcome` answers in_transit until one settles the cashout.
// - A refusal (AcquirerRefused: a 4xx, or a 200 whose `resultCode`/`response` is not the "received" one,
//   which Payout v50 documents as "an informational message" for an error) ends the cashout only when
//   nothing can be paid any more: a refused submission pays nothing (it was never submitted); a refused
//   confirmation is followed by `declineThirdParty` (Idempotency-Key `<cashout id>:payout:decline`), and
//   only Adyen's "[payout-decline-received]" makes it final. Both throw PayoutRefused, and the cashout
//   fails with its amount back (domain/cashouts/payouts.ts sendOrFail). A decline Adyen refuses too (the
//   payout may have been confirmed after all, or the reviewer credential is wrong) is not taken as a
//   failure: the cashout stays in transit, retried with the same keys, until Adyen's PAYOUT_* notification
//   says what became of it. In doubt (time-out, 5xx, 429) is thrown on unchanged: retried the same way.

export type PayoutHolder = PayoutSubmission["holder"];

/** The confirmation's key: derived from the cashout as the submission's is (payout-rail.ts payoutKey). */
export const confirmKey = (idempotencyKey: string) => `${idempotencyKey}:confirm`;

/** The decline's key, after a refused confirmation: derived likewise. */
export const declineKey = (idempotencyKey: string) => `${idempotencyKey}:decline`;

/** How a refusal is shown to the merchant: Adyen's status and error code, never Adyen's raw text. */
function refusalShown(error: AcquirerRefused, what: string): string {
  const code = error.errorCode ? `, Adyen error ${error.errorCode}` : "";
  return `The acquirer refused ${what} (HTTP ${error.status}${code}); nothing was paid, and the amount is available again.`;
}

export const HOLDER_MISSING =
  "Adyen's payout API requires the account holder's identity: give destination.holder (entity_type, email, nationality, date_of_birth)";

/** Adyen's holder fields from the destination's, or null when the destination carries none. */
export function holderOf(request: Pick<PayoutRequest, "merchantId" | "destination">): PayoutHolder | null {
  const destination = request.destination;
  if (destination.type !== "iban" || !destination.holder) return null;
  const { holder } = destination;
  return {
    email: holder.email,
    shopperReference: request.merchantId,
    entityType: holder.entity_type === "company" ? "Company" : "NaturalPerson",
    nationality: holder.nationality,
    dateOfBirth: holder.date_of_birth,
  };
}

export function createAdyenPayoutRail(acquirer: Pick<Acquirer, "payout" | "confirmPayout" | "declinePayout">) {
  const rail: PayoutRail & { refuses(livemode: boolean, destination: Destination): PayoutRefusal | null } = {
    refuses(_livemode, destination) {
      if (destination.type !== "iban") {
        return {
          param: "destination.type",
          reason: `Adyen's payout API pays bank accounts by IBAN only; a ${destination.type} destination cannot be paid through this server's acquirer (Adyen)`,
        };
      }
      if (!destination.holder) return { param: "destination.holder", reason: HOLDER_MISSING };
      return null;
    },

    async send(request) {
      const why = rail.refuses(request.livemode, request.destination);
      const holder = holderOf(request);
      if (why || !holder) throw new Error(`cashout ${request.cashoutId}: ${why?.reason ?? HOLDER_MISSING}`);
      let reference: string;
      try {
        ({ reference } = await acquirer.payout({ ...request, holder }));
      } catch (error) {
        if (!(error instanceof AcquirerRefused)) throw error;
        throw new PayoutRefused(`cashout ${request.cashoutId}: ${error.message}`, refusalShown(error, "the payout"), {
          cause: error,
        });
      }
      try {
        await acquirer.confirmPayout({ idempotencyKey: confirmKey(request.idempotencyKey), reference });
      } catch (error) {
        if (!(error instanceof AcquirerRefused)) throw error;
        await declineRefused(request, reference, error);
        throw new PayoutRefused(
          `cashout ${request.cashoutId}: ${error.message}; the submission ${reference} was declined`,
          refusalShown(error, "the payout's confirmation"),
          { cause: error },
        );
      }
      return { reference };
    },

    // Adyen tells by notification; until it has, the payout is on its way.
    async outcome() {
      return { status: "in_transit" };
    },
  };
  /**
   * After a refused confirmation: declines the submission, so that it can never be paid. Returns once
   * Adyen received the decline; a refused decline leaves the payout's fate to Adyen's notification.
   */
  async function declineRefused(request: PayoutRequest, reference: string, refused: AcquirerRefused): Promise<void> {
    try {
      await acquirer.declinePayout({ idempotencyKey: declineKey(request.idempotencyKey), reference });
    } catch (error) {
      if (!(error instanceof AcquirerRefused)) throw error;
      throw new Error(
        `cashout ${request.cashoutId}: ${refused.message}, and then ${error.message}; the payout ${reference} stays in transit until Adyen's notification says what became of it`,
        { cause: error },
      );
    }
  }

  return rail;
}
