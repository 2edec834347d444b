import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { DomainError } from "../kernel/errors.ts";
import { randomBase62 } from "../kernel/ids.ts";

// The hosted page's token (PaymentLinkPay.page_token in spec/resources/payment-links.tsp): every page
// served for a link carries a fresh one, and the public pay operation takes only a token that this
// server issued for that same link and that has not expired. It binds each payment attempt to a page
// view of that link (a script cannot replay an old page, or pay one link with another link's page), on
// top of the same-origin checks the HTTP layer makes.
//
// Stateless: `v1.<expiry, unix seconds>.<16 random base62>.<base64url HMAC-SHA256>` over the link id,
// the expiry and the nonce, under a key derived (HKDF, its own label) from the vault's fingerprint key.
// Every instance configured with the same vault keys accepts every other instance's tokens.

export interface PageTokens {
  issue(linkId: string, now: Date): string;
  /** Throws a 403 `forbidden` naming `page_token` unless the token is this link's, unaltered and unexpired. */
  verify(linkId: string, token: string, now: Date): void;
}

const LABEL = "payments/payment-page-token/v1";

export function createPageTokens(fingerprintKey: Buffer, ttlSeconds: number): PageTokens {
  const key = Buffer.from(hkdfSync("sha256", fingerprintKey, Buffer.alloc(0), LABEL, 32));
  const mac = (linkId: string, expires: string, nonce: string) =>
    createHmac("sha256", key).update(`v1.${linkId}.${expires}.${nonce}`, "utf8").digest("base64url");
  const refused = () =>
    new DomainError(
      "forbidden",
      "The payment page's token is missing, altered, expired or another link's: reload the payment page and try again.",
      { param: "page_token" },
    );

  return {
    issue(linkId, now) {
      const expires = String(Math.floor(now.getTime() / 1000) + ttlSeconds);
      const nonce = randomBase62(16);
      return `v1.${expires}.${nonce}.${mac(linkId, expires, nonce)}`;
    },
    verify(linkId, token, now) {
      const parts = token.split(".");
      if (parts.length !== 4 || parts[0] !== "v1") throw refused();
      const [, expires = "", nonce = "", given = ""] = parts;
      if (!/^[0-9]{1,12}$/.test(expires) || !/^[0-9A-Za-z]{16}$/.test(nonce)) throw refused();
      const expected = Buffer.from(mac(linkId, expires, nonce), "utf8");
      const actual = Buffer.from(given, "utf8");
      if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) throw refused();
      if (Number(expires) * 1000 < now.getTime()) throw refused();
    },
  };
}
