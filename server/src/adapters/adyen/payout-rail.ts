import type { Destination } from "../../domain/cashouts/destinations.ts";
import type { PayoutRail, PayoutRequest } from "../../domain/cashouts/payout-rail.ts";
import type { Acquirer, PayoutSubmission } from "./acquirer.ts";

// The payout port (domain/cashouts/payout-rail.ts) over Adyen's Payout API v50 (connector.ts `payout`),
// for an environment whose acquirer is `adyen` (acquirers.ts payoutRailFor).
//
// - Adyen pays bank accounts by IBAN only: a cashout to any other destination type is refused when it is
//   created (400 on `destination.type`), never simulated.
// - Payout v50 requires the account holder's identity (e-mail, shopper reference, entity type,
//   nationality, date of birth): `holderFor` gives it for a payout, or null when it is not known. Merchants
//   carry none of it yet (to be collected at onboarding), so without a `holderFor` every cashout is
//   refused at creation with that reason.
// - The payout is sent with `<cashout id>:payout` as its Idempotency-Key and the cashout id as Adyen's
//   `reference`; its outcome comes by notification (PAYOUT_THIRDPARTY, PAYOUT_DECLINE, PAYOUT_EXPIRE), so
//   `outcome` answers in_transit until that notification settles the cashout.

export type PayoutHolder = PayoutSubmission["holder"];

export interface AdyenPayoutRailOptions {
  /** The account holder Adyen requires for this payout, or null when the platform does not know it. */
  holderFor?: ((request: PayoutRequest) => Promise<PayoutHolder | null>) | undefined;
}

export const HOLDER_UNKNOWN =
  "Adyen's payout API requires the account holder's e-mail, date of birth and nationality, which this platform does not hold for its merchants yet";

export function createAdyenPayoutRail(acquirer: Pick<Acquirer, "payout">, options: AdyenPayoutRailOptions = {}) {
  const rail: PayoutRail & { refuses(livemode: boolean, destination: Destination): string | null } = {
    refuses(_livemode, destination) {
      if (destination.type !== "iban") {
        return `Adyen's payout API pays bank accounts by IBAN only; a ${destination.type} destination cannot be paid through this server's acquirer (Adyen)`;
      }
      if (!options.holderFor) return HOLDER_UNKNOWN;
      return null;
    },

    async send(request) {
      const why = rail.refuses(request.livemode, request.destination);
      if (why) throw new Error(`cashout ${request.cashoutId}: ${why}`);
      const holder = await options.holderFor?.(request);
      if (!holder) throw new Error(`cashout ${request.cashoutId}: ${HOLDER_UNKNOWN}`);
      return acquirer.payout({ ...request, holder });
    },

    // Adyen tells by notification; until it has, the payout is on its way.
    async outcome() {
      return { status: "in_transit" };
    },
  };
  return rail;
}
