import { randomInt } from "node:crypto";

// Every id is a prefix, an underscore and 24 random base62 characters. The spec pins each prefix with a
// @pattern (spec/common/ids.tsp); this is the only place ids are made.

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export const ID_PREFIXES = {
  merchant: "mch",
  token: "tok",
  transaction: "tx",
  refund: "re",
  serviceKey: "kid",
  event: "evt",
  request: "req",
  paymentLink: "plink",
  cashout: "co",
  fraudEvaluation: "fe",
  fraudList: "fl",
  fraudListItem: "fli",
  webhookEndpoint: "we",
  webhookDelivery: "whd",
  ledgerEntry: "le",
  audit: "aud",
} as const;

export type IdPrefix = (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES];

/** `length` random base62 characters from the CSPRNG (no modulo bias: randomInt is uniform). */
export function randomBase62(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`);
}
