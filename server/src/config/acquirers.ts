import { readFileSync } from "node:fs";
import { z } from "zod";
import { errorCode } from "../guards.ts";
import { ConfigError, group, int, type Rule, secret, setting } from "./kit.ts";

// The acquirers each environment's payments go through, and the Adyen connector's account
// (adapters/adyen/; docs/going-live-with-adyen.md "Settings"), read where an acquirer is `adyen`
// (server/src/acquirers.ts). One account and one environment for both environments that use it.

export const acquirerSettings = group("acquirers", {
  PRODUCTION_ACQUIRER: setting(
    z.enum(["adyen", "simulator"]).optional(),
    "The acquirer production payments go through: `adyen`, or `simulator` (no money moves: for demos and tests, logged as a warning at start). Deliberately no default: unset, production money operations answer 503 `acquirer_not_configured`, never a simulated success (docs/acquirer-port.md).",
  ),
  SANDBOX_ACQUIRER: setting(
    z.enum(["simulator", "adyen"]).default("simulator"),
    "The acquirer sandbox payments go through: `simulator` (default), or `adyen` (Adyen's test environment).",
  ),
  ADYEN_ENVIRONMENT: setting(
    z.enum(["test", "live"]).optional(),
    "Adyen's environment: `test` (Adyen's test platform: no real money) or `live`. Required wherever an acquirer is `adyen`, never defaulted: which money moves is said out loud. The sandbox is never `live`.",
  ),
  ADYEN_API_KEY: secret(
    z.string().min(1).optional(),
    "Adyen's API key (header X-API-Key). This or ADYEN_API_KEY_FILE (a file holding it: a container secret) is required wherever an acquirer is `adyen`.",
  ),
  ADYEN_API_KEY_FILE: secret(
    z.string().min(1).optional(),
    "A file holding Adyen's API key (trailing whitespace ignored), instead of ADYEN_API_KEY.",
  ),
  // Payout v50's second credential (docs/going-live-with-adyen.md "Cashouts", "Reviewer").
  ADYEN_PAYOUT_REVIEWER_API_KEY: secret(
    z.string().min(1).optional(),
    "The API key of Adyen's payout reviewer (a second web service user, with the role to confirm and decline payouts), sent only on Payout v50's confirmThirdParty and declineThirdParty; ADYEN_API_KEY submits them. Unset (and ADYEN_PAYOUT_REVIEWER_API_KEY_FILE unset), ADYEN_API_KEY confirms too, which needs one credential holding both roles (the start logs `payout_reviewer_key: same as ADYEN_API_KEY`).",
  ),
  ADYEN_PAYOUT_REVIEWER_API_KEY_FILE: secret(
    z.string().min(1).optional(),
    "A file holding ADYEN_PAYOUT_REVIEWER_API_KEY (trailing whitespace ignored), instead of the setting; not both.",
  ),
  ADYEN_MERCHANT_ACCOUNT: setting(
    z.string().min(1).optional(),
    "The Adyen merchant account payments are made under. Required wherever an acquirer is `adyen`.",
  ),
  ADYEN_TIMEOUT_MS: setting(
    int(1000, 120_000).default(30_000),
    "How long one call to Adyen may take, in milliseconds; past it the call is in doubt and is sent again under the same idempotency key (by a retry or the recovery job), never under a new one.",
  ),
  ADYEN_CHECKOUT_URL: setting(
    z.url().optional(),
    "Tests and staging only (refused with ADYEN_ENVIRONMENT=live): the base URL of Adyen's Checkout v71 API instead of Adyen's own, e.g. the contract-validated stand-in (test/support/adyen-stand-in/) behind Prism's proxy.",
  ),
  ADYEN_PAYOUT_URL: setting(
    z.url().optional(),
    "Tests and staging only (refused with ADYEN_ENVIRONMENT=live): the base URL of Adyen's Payout v50 API instead of Adyen's own.",
  ),
  ADYEN_DISPUTES_URL: setting(
    z.url().optional(),
    "Tests and staging only (refused with ADYEN_ENVIRONMENT=live): the base URL of Adyen's Disputes v30 API instead of Adyen's own.",
  ),
  // Adyen's notifications (receiveAdyenNotifications, docs/going-live-with-adyen.md "Notifications endpoint").
  ADYEN_HMAC_KEYS: secret(
    z
      .string()
      .min(1)
      .refine((text) => hmacKeyList(text) !== null, {
        message: "must be hexadecimal keys (an even number of 0-9a-f each), comma-separated",
      })
      .optional(),
    "The HMAC keys Adyen signs its notifications with: hexadecimal, as the Customer Area shows them, comma-separated while a key is being rotated (an item signed by any of them is accepted). Unset (and ADYEN_HMAC_KEYS_FILE unset), the endpoint answers 503.",
  ),
  ADYEN_HMAC_KEYS_FILE: secret(
    z.string().min(1).optional(),
    "A file holding ADYEN_HMAC_KEYS (a mounted secret), read at start; not both.",
  ),
  ADYEN_LIVE_URL_PREFIX: setting(
    z.string().min(1).optional(),
    "The live endpoints' URL prefix Adyen gives each account. Required when PRODUCTION_ACQUIRER is `adyen`.",
  ),
});

/** A secret comes from the setting or from a file, never both. */
export const hmacKeysOnce: Rule<{ ADYEN_HMAC_KEYS?: string | undefined; ADYEN_HMAC_KEYS_FILE?: string | undefined }> = (
  c,
  problem,
) => {
  if (c.ADYEN_HMAC_KEYS !== undefined && c.ADYEN_HMAC_KEYS_FILE !== undefined) {
    problem("ADYEN_HMAC_KEYS_FILE", "set ADYEN_HMAC_KEYS or ADYEN_HMAC_KEYS_FILE, not both");
  }
};

type AdyenConfig = {
  PRODUCTION_ACQUIRER?: "adyen" | "simulator" | undefined;
  SANDBOX_ACQUIRER: "adyen" | "simulator";
  ADYEN_ENVIRONMENT?: "test" | "live" | undefined;
  ADYEN_API_KEY?: string | undefined;
  ADYEN_API_KEY_FILE?: string | undefined;
  ADYEN_PAYOUT_REVIEWER_API_KEY?: string | undefined;
  ADYEN_PAYOUT_REVIEWER_API_KEY_FILE?: string | undefined;
  ADYEN_MERCHANT_ACCOUNT?: string | undefined;
  ADYEN_HMAC_KEYS?: string | undefined;
  ADYEN_HMAC_KEYS_FILE?: string | undefined;
  ADYEN_LIVE_URL_PREFIX?: string | undefined;
  ADYEN_CHECKOUT_URL?: string | undefined;
  ADYEN_PAYOUT_URL?: string | undefined;
  ADYEN_DISPUTES_URL?: string | undefined;
};

/** Wherever an acquirer is `adyen`, its account is given whole, and live money is never the sandbox's. */
export const adyenComplete: Rule<AdyenConfig> = (c, problem) => {
  const adyenFor = [
    ...(c.PRODUCTION_ACQUIRER === "adyen" ? ["PRODUCTION_ACQUIRER"] : []),
    ...(c.SANDBOX_ACQUIRER === "adyen" ? ["SANDBOX_ACQUIRER"] : []),
  ];
  if (adyenFor.length === 0) return;
  const when = `is required when ${adyenFor.join(" or ")} is adyen`;
  if (!c.ADYEN_MERCHANT_ACCOUNT) problem("ADYEN_MERCHANT_ACCOUNT", when);
  if (!c.ADYEN_HMAC_KEYS && !c.ADYEN_HMAC_KEYS_FILE) problem("ADYEN_HMAC_KEYS", `${when} (or ADYEN_HMAC_KEYS_FILE)`);
  if (!c.ADYEN_ENVIRONMENT) problem("ADYEN_ENVIRONMENT", `${when} (test or live)`);
  if (!c.ADYEN_API_KEY && !c.ADYEN_API_KEY_FILE) problem("ADYEN_API_KEY", `${when} (or ADYEN_API_KEY_FILE)`);
  if (c.ADYEN_API_KEY && c.ADYEN_API_KEY_FILE) {
    problem("ADYEN_API_KEY_FILE", "set ADYEN_API_KEY or ADYEN_API_KEY_FILE, not both");
  }
  if (c.ADYEN_PAYOUT_REVIEWER_API_KEY && c.ADYEN_PAYOUT_REVIEWER_API_KEY_FILE) {
    problem(
      "ADYEN_PAYOUT_REVIEWER_API_KEY_FILE",
      "set ADYEN_PAYOUT_REVIEWER_API_KEY or ADYEN_PAYOUT_REVIEWER_API_KEY_FILE, not both",
    );
  }
  if (c.ADYEN_ENVIRONMENT !== "live") return;
  if (!c.ADYEN_LIVE_URL_PREFIX) {
    problem(
      "ADYEN_LIVE_URL_PREFIX",
      "is required when ADYEN_ENVIRONMENT is live (your account's prefix, from Adyen's Customer Area)",
    );
  }
  if (c.SANDBOX_ACQUIRER === "adyen") {
    problem(
      "SANDBOX_ACQUIRER",
      "adyen with ADYEN_ENVIRONMENT=live would take sandbox payments in real money; the sandbox uses Adyen's test environment or the simulator",
    );
  }
  for (const key of ["ADYEN_CHECKOUT_URL", "ADYEN_PAYOUT_URL", "ADYEN_DISPUTES_URL"] as const) {
    if (c[key] !== undefined) problem(key, "is for tests and staging; unset it with ADYEN_ENVIRONMENT=live");
  }
};

/** Comma-separated hexadecimal keys as a list, or null when one is not hexadecimal. */
function hmacKeyList(text: string): string[] | null {
  const keys = text
    .split(",")
    .map((key) => key.trim())
    .filter((key) => key !== "");
  return keys.length > 0 && keys.every((key) => /^(?:[0-9a-fA-F]{2})+$/.test(key)) ? keys : null;
}

/**
 * The HMAC keys of Adyen's notifications: ADYEN_HMAC_KEYS, or the file ADYEN_HMAC_KEYS_FILE names;
 * none, an empty list (the endpoint answers 503). A file that
 * cannot be read or holds anything but keys stops the start, naming the setting, never the content.
 */
export function adyenHmacKeys(config: {
  ADYEN_HMAC_KEYS?: string | undefined;
  ADYEN_HMAC_KEYS_FILE?: string | undefined;
}): string[] {
  let text = config.ADYEN_HMAC_KEYS;
  if (config.ADYEN_HMAC_KEYS_FILE !== undefined) {
    try {
      text = readFileSync(config.ADYEN_HMAC_KEYS_FILE, "utf8");
    } catch (err) {
      throw new ConfigError(
        `Invalid configuration:\n  ADYEN_HMAC_KEYS_FILE: cannot be read (${errorCode(err) ?? "error"})`,
      );
    }
  }
  if (text === undefined) return [];
  const keys = hmacKeyList(text);
  if (keys === null) {
    throw new ConfigError(
      `Invalid configuration:\n  ${config.ADYEN_HMAC_KEYS_FILE !== undefined ? "ADYEN_HMAC_KEYS_FILE" : "ADYEN_HMAC_KEYS"}: must hold hexadecimal keys (an even number of 0-9a-f each), comma-separated`,
    );
  }
  return keys;
}
