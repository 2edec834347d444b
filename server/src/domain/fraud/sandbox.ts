import type { ListAction, ListKind } from "./rules.ts";

// Sandbox defaults (spec: FraudEvaluation documents each value), so that every signal can be
// triggered in the sandbox without any setup. They apply to sandbox evaluations only; production
// evaluations see only the lists an operator made. Test card numbers follow Stripe's, so
// integrators recognise them.

/** Built-in value lists of the sandbox, matched like stored ones. */
export const SANDBOX_LISTS: readonly { kind: ListKind; action: ListAction; value: string; name: string }[] = [
  // Test card 4100000000000019 is always blocked.
  { kind: "card_bin", action: "block", value: "410000", name: "test cards that are always blocked" },
  // Test card 4000056655665556 (Visa debit) has a high-risk BIN.
  { kind: "card_bin", action: "flag", value: "40000566", name: "high-risk test BIN" },
  // RFC 5737 TEST-NET-3 and part of the RFC 3849 documentation prefix stand for VPN ranges.
  { kind: "ip_address", action: "flag", value: "203.0.113.0/24", name: "VPN range, RFC 5737 TEST-NET-3" },
  { kind: "ip_address", action: "flag", value: "2001:db8:bad::/48", name: "VPN range, RFC 3849 documentation prefix" },
];

/** Where the sandbox locates the other RFC 5737 documentation ranges (country_mismatch). */
export const SANDBOX_IP_COUNTRIES: readonly { cidr: string; country: string }[] = [
  { cidr: "192.0.2.0/24", country: "US" },
  { cidr: "198.51.100.0/24", country: "BR" },
];

/** Stripe's international test cards, which carry their issuing country (country_mismatch). */
export const SANDBOX_CARD_COUNTRIES: Readonly<Record<string, string>> = {
  "4000000760000002": "BR",
  "4000001240000000": "CA",
  "4000004840008001": "MX",
  "4000008260000000": "GB",
};

/** The test card that always goes to review (test_card_elevated_risk). */
export const ELEVATED_RISK_TEST_CARD = "4000000000009235";
