// The chart of accounts (DESIGN §8, issue 30). Every line of a posting names one of these. Each account's
// balance is the sum of its lines; the lines of every posting add up to zero, so all accounts together
// always add up to zero in each currency. Signs follow from that:
//
// - merchant:<id>:pending, merchant:<id>:available: what the platform owes the merchant, not yet and
//   already available for cashouts (positive). Their sums are kept as the merchant's balance
//   (BalanceDoc), because overdraft checks need them in one read.
// - merchant:<id>:disputed: money held back from a merchant while a dispute runs (issue 31; not posted yet).
// - acquirer:clearing: what the acquirer owes the platform for captured payments, less what the platform
//   owes it back for refunds: negative while the acquirer owes (a capture debits it, a refund credits it).
//   Issue 32 (a real acquirer) clears it against the acquirer's settlement.
// - platform:fee_revenue: the platform's fees (positive).
// - cashouts:in_transit: cashouts taken from merchants' balances and not yet paid (positive).
// - cashouts:paid_out: everything paid to merchants' bank accounts (positive: money that left).
//
// The platform's accounts are not kept as running totals: one row every capture writes would make every
// capture of every merchant wait for the one before it. `ledger verify` adds them up (verify.ts).

export type MerchantBucket = "available" | "pending";

export type PlatformAccount =
  | "acquirer:clearing"
  | "platform:fee_revenue"
  | "cashouts:in_transit"
  | "cashouts:paid_out";

export type Account = { merchantId: string; bucket: MerchantBucket | "disputed" } | { platform: PlatformAccount };

export const merchantAccount = (merchantId: string, bucket: MerchantBucket | "disputed"): Account => ({
  merchantId,
  bucket,
});

export const platformAccount = (name: PlatformAccount): Account => ({ platform: name });

export function accountName(account: Account): string {
  return "platform" in account ? account.platform : `merchant:${account.merchantId}:${account.bucket}`;
}

const MERCHANT_ACCOUNT = /^merchant:([A-Za-z0-9_]+):(available|pending|disputed)$/;

/** The merchant and bucket an account name stands for, or null for the platform's accounts. */
export function parseMerchantAccount(name: string): { merchantId: string; bucket: MerchantBucket | "disputed" } | null {
  const [, merchantId, bucket] = MERCHANT_ACCOUNT.exec(name) ?? [];
  if (merchantId === undefined || (bucket !== "available" && bucket !== "pending" && bucket !== "disputed"))
    return null;
  return { merchantId, bucket };
}
