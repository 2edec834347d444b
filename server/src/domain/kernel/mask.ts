// Masking for everything a person can read: error messages, log lines, the console's request log,
// webhook attempt logs. Two kinds of secret are masked wherever they appear, in whatever field or
// position they arrive (docs/api.md "What is masked and what is refused"):
// - card numbers: only the first four and last four digits stay visible (a fixed fact of this API;
//   docs/vault.md 'The vault'); the number appears nowhere else in clear;
// - the credentials this API issues (service-key secrets, webhook signing secrets, console session
//   tokens, hosted-page tokens): only their type marker and the first four random characters stay
//   visible, as in a service key's listed `prefix` (ServiceKey.prefix in spec/resources/service-keys.tsp).
// maskSensitive does both and is what every writer calls. What looks like a card number is
// card-number.ts's rule and what looks like a credential credentials.ts's (both shared with the
// free-text refusal); this file is the order in which both are applied, and URLs.
import { maskCardNumbers } from "./card-number.ts";
import { maskCredentials } from "./credentials.ts";

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
