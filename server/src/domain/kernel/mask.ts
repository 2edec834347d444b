// Masking for everything a person can read: error messages, log lines, the console's request log,
// webhook attempt logs. Two kinds of secret are masked wherever they appear, in whatever field or
// position they arrive (docs/api.md "What is masked and what is refused"):
// - card numbers: only the first four and last four digits stay visible (a fixed fact of this API;
//   docs/vault.md 'The vault'); the number appears nowhere else in clear;
// - the credentials this API issues (service-key secrets, webhook signing secrets, console session
//   tokens, hosted-page tokens): only their type marker and the first four random characters stay
//   visible, as in a service key's listed `prefix` (ServiceKey.prefix in spec/resources/service-keys.tsp).
// maskSensitive does both and is what every writer calls. What looks like a card number is
// card-number.ts's rule (shared with the free-text refusal); this file is the home of the credential
// shapes and of the order in which both are applied.
import { maskCardNumbers } from "./card-number.ts";

/**
 * The credentials this API issues, by their shapes. The type marker and the first four random
 * characters stay visible (`key_live_4fQx…`, the listing's `prefix` followed by an ellipsis): enough
 * for a person to tell which key, endpoint secret or session it was, and 24 bits of a 190-bit secret,
 * which guess nothing. The rest of the secret is replaced by one `…`, so even its length is hidden.
 * - service-key secrets `key_test_…` / `key_live_…` (spec/resources/service-keys.tsp,
 *   ServiceKeyWithSecret.secret);
 * - webhook signing secrets `whsec_…` (spec/resources/webhook-endpoints.tsp, WebhookEndpointWithSecret);
 * - console session tokens `csess_…` (the session cookie, docs/console.md "The console");
 * - hosted-page tokens `v1.<expiry>.<nonce>.<signature>` (PaymentLinkPay.page_token in
 *   spec/resources/payment-links.tsp): the version and expiry are not secret and stay, then four
 *   characters of the nonce.
 * Any length of random part is masked, not only the issued one: a secret cut short, or with characters
 * added, is still most of a secret. The markers' underscores may also be percent-encoded (`%5F`: text
 * not decoded, or encoded twice). Text that was masked already is left as it is.
 */
const CREDENTIAL =
  /(key(?:_|%5[Ff])(?:test|live)(?:_|%5[Ff])|whsec(?:_|%5[Ff])|csess(?:_|%5[Ff]))([0-9A-Za-z]{5,})|(v1\.[0-9]{1,12}\.)([0-9A-Za-z]{4,}\.[0-9A-Za-z_-]+)/g;

/**
 * Characters of a credential's random part that stay visible after its type marker. A random part no
 * longer than that (a listed key prefix, `key_test_abcd`) is not matched at all: it shows nothing more.
 */
const CREDENTIAL_VISIBLE = 4;

/** `key_live_4fQxT2…` → `key_live_4fQx…`: every credential this API issues, masked in arbitrary text. */
export function maskCredentials(text: string): string {
  return text.replace(
    CREDENTIAL,
    (_match, marker?: string, secret?: string, pageMarker?: string, pageRest?: string) => {
      const head = marker ?? pageMarker ?? "";
      const rest = secret ?? pageRest ?? "";
      const shown = rest.length <= CREDENTIAL_VISIBLE ? head + rest : `${head}${rest.slice(0, CREDENTIAL_VISIBLE)}…`;
      // A page token's expiry is ten digits after the `1` of `v1`: a nonce that starts with a digit would
      // join them into a run of twelve, which the card mask (run after this one) reads as a card number
      // and stars, expiry included. Then none of the nonce is shown, and the expiry stays readable.
      if (pageMarker !== undefined && maskCardNumbers(shown) !== shown) return `${head}…`;
      return shown;
    },
  );
}

/**
 * Every card number and every credential in arbitrary text, masked: what each writer (the logger,
 * the request log, problem details, webhook attempt logs) passes text through. Credentials first: a
 * secret's random part may hold a run of digits, which the card mask would star and so split into
 * pieces the credential shapes no longer recognise.
 */
export function maskSensitive(text: string): string {
  return maskCardNumbers(maskCredentials(text));
}

/**
 * Percent-decodes every well-formed escape sequence and keeps the malformed ones as they are, so one bad
 * escape does not leave the rest of a URL encoded (an encoded `_` would hide `key%5Ftest%5F…` from the
 * credential shapes). A query's `+` reads as a space.
 */
function decodeLeniently(url: string): string {
  return url.replaceAll("+", " ").replace(/(?:%[0-9A-Fa-f]{2})+/g, (escapes) => {
    try {
      return decodeURIComponent(escapes);
    } catch {
      return decodeBytewise(escapes);
    }
  });
}

/** A run of escapes that is not valid UTF-8 as a whole: each escape that is ASCII alone is decoded. */
function decodeBytewise(escapes: string): string {
  return escapes.replace(/%([0-7][0-9A-Fa-f])/g, (_escape, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

/**
 * A request's path and query as a person reads them, for logs and the request log: percent-decoded
 * (query `+` as a space; malformed escapes kept raw, the rest decoded), then masked (maskSensitive),
 * then cut to `maxLength`.
 */
export function displayUrl(url: string, maxLength: number): string {
  const masked = maskSensitive(decodeLeniently(url));
  return masked.length <= maxLength ? masked : `${masked.slice(0, maxLength - 1)}…`;
}
