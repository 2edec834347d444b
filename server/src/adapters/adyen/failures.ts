import type { FailureCode } from "../../domain/charges/processor.ts";

// Adyen's refusal reasons (its "Refusal reasons" page: `refusalReasonCode` with `resultCode` Refused) as
// our failure codes (FailureCode, the contract's Charge `failure_code`). Only what a payer or merchant can
// act on gets its own code: the card's funds and expiry, and a failed 3-D Secure challenge. Everything the issuer or scheme declined is
// card_declined; what failed at Adyen, the acquirer or the issuer's systems is processing_error (the
// payer may try again). The message is ours, never Adyen's raw text: it is shown to merchants.

const INSUFFICIENT_FUNDS = new Set(["12", "28"]); // Not enough balance; Withdrawal amount exceeded
const EXPIRED = new Set(["6"]); // Expired Card
const NOT_AUTHENTICATED = new Set(["11"]); // 3D Not Authenticated: the payer failed the issuer's challenge
const PROCESSING = new Set([
  "0", // Unknown
  "4", // Acquirer Error
  "9", // Issuer Unavailable
  "15", // Cancelled
  "21", // Not Submitted
  "39", // RReq not received from DS
  "42", // 3DS Authentication Error
]);

const MESSAGES: Record<FailureCode, string> = {
  card_declined: "The card was declined.",
  insufficient_funds: "The card has insufficient funds.",
  expired_card: "The card has expired.",
  processing_error: "The payment could not be processed; the payer may try again.",
  authentication_failed: "The payer did not complete 3-D Secure authentication.",
};

/** The failure for a payment Adyen answered Refused, Cancelled or Error, by its refusal reason code. */
export function failureFor(
  resultCode: "Refused" | "Cancelled" | "Error",
  refusalReasonCode: string | undefined,
): { failureCode: FailureCode; failureMessage: string } {
  const code = refusalReasonCode ?? "";
  let failureCode: FailureCode = "card_declined";
  if (resultCode === "Error" || PROCESSING.has(code)) failureCode = "processing_error";
  else if (INSUFFICIENT_FUNDS.has(code)) failureCode = "insufficient_funds";
  else if (EXPIRED.has(code)) failureCode = "expired_card";
  else if (NOT_AUTHENTICATED.has(code)) failureCode = "authentication_failed";
  return { failureCode, failureMessage: MESSAGES[failureCode] };
}
