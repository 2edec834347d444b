// Masking for everything a person can read: error messages, log lines, the console's request log,
// webhook attempt logs. Two kinds of secret are masked wherever they appear, in whatever field or
// position they arrive (docs/api.md "What is masked and what is refused"):
// - card numbers: only the first four and last four digits stay visible (a fixed fact of this API;
//   docs/vault.md 'The vault'); the number appears nowhere else in clear;
// - the credentials this API issues (service-key secrets, webhook signing secrets, console session
//   tokens, hosted-page tokens): only their type marker and the first four random characters stay
//   visible, as in a service key's listed `prefix` (ServiceKey.prefix in spec/resources/service-keys.tsp).
// maskSensitive does both and is what every writer calls; this file is the one home of both rules.

/** The fewest digits a card number the API accepts can have (spec/resources/tokens.tsp, TokenCreate.card). */
const MIN_PAN_DIGITS = 12;
const VISIBLE_HEAD = 4;
const VISIBLE_TAIL = 4;

/**
 * A percent-encoded character (`%2D`): copied as it is and never counted as digits, so the `2` and `0` of
 * an encoded space are not taken for part of the number around them.
 */
export function escapeAt(text: string, i: number): number {
  return text[i] === "%" && HEX.test(text.slice(i + 1, i + 3)) ? 3 : 0;
}
const HEX = /^[0-9A-Fa-f]{2}$/;

/**
 * Replaces every digit except the first four and the last four with `*`; other characters (the spaces
 * or dashes of a formatted number, percent escapes) stay where they are, so `4242 4242 4242 4242` reads
 * `4242 **** **** 4242`. Below 12 digits, first four plus last four would leave (almost) nothing
 * hidden, so such input is starred entirely rather than echoed.
 */
function maskDigits(text: string, digitCount: number): string {
  const hideAll = digitCount < MIN_PAN_DIGITS;
  let seen = 0;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const escaped = escapeAt(text, i);
    if (escaped > 0) {
      out += text.slice(i, i + escaped);
      i += escaped - 1;
      continue;
    }
    const ch = text[i] as string;
    if (ch >= "0" && ch <= "9") {
      const visible = !hideAll && (seen < VISIBLE_HEAD || seen >= digitCount - VISIBLE_TAIL);
      out += visible ? ch : "*";
      seen++;
    } else {
      out += ch;
    }
  }
  return out;
}

function countDigits(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const escaped = escapeAt(text, i);
    if (escaped > 0) {
      i += escaped - 1;
      continue;
    }
    const ch = text[i] as string;
    if (ch >= "0" && ch <= "9") n++;
  }
  return n;
}

/** `4242424242424242` → `4242********4242`: the only form in which a card number may be shown. */
export function maskPan(pan: string): string {
  return maskDigits(pan, countDigits(pan));
}

/**
 * What a person reads as the gap between digit groups of a card number: white space (no-break space
 * included), `-`, `.`, `_`, `,`, `/`, `+`, and the same characters percent-encoded (`%20`, `%2D`, `%2F`,
 * `%09`, `%0A`, `%0D`, `%2B`, `%2C`, `%2E`, `%5F`, `%C2%A0`), so a number is caught whether or not the
 * text was decoded first.
 */
export const SEPARATOR = String.raw`(?:[\s._,/+-]|%(?:2[0BbCcDdEeFf]|5[Ff]|0[9AaDd]|[Cc]2%[Aa]0))`;

/**
 * A run of at least MIN_PAN_DIGITS digits with at most three separators between any two of them.
 * Separators and digits are disjoint and each encoded separator is decided by its own characters, so
 * the next characters alone decide every step and the bounded repetition cannot split the same text
 * two ways; an attempt that fails costs at most one short run, so matching stays linear in the input.
 * The run is taken greedily from its first digit, so a match never starts in the middle of a longer
 * run. A shorter run (a date, a time, an amount: most of every log line's digits) does not match at
 * all, so the replacer runs only for what it masks (calling it for every run of two digits or more, to
 * count them, was about 40 % of masking a request's log line). The one case where this masks more than that scan:
 * after a run too short to mask, a match may start on the `2` of an encoded space (`%20`) or the `0`
 * of `%09` that the run had read as a separator, and then counts those two digits (mask.test.ts checks
 * that it never masks less).
 */
const DIGIT_RUN = new RegExp(`[0-9](?:${SEPARATOR}{0,3}[0-9]){${MIN_PAN_DIGITS - 1},}`, "g");

/**
 * Masks every card-number-like digit run in arbitrary text (a log line, a JSON body, a URL with a query
 * string, encoded or not) so only its first four and last four digits remain.
 *
 * Every run of 12 or more digits is masked, whether or not it passes the Luhn check and whatever its
 * neighbours:
 * - not Luhn-gated: a mistyped card number (the 400 example in tokens.tsp, 4242424242424241) is still
 *   a real customer's number with one digit off, and a Luhn-gated mask would leave it in the log;
 * - from 12 digits, not 13: the API accepts 12-digit numbers (Maestro issues them), and the log must
 *   never hold a number the API would take as a card;
 * - runs longer than 19 digits are masked whole, and letters next to a run do not protect it: a card
 *   number glued to other digits (`00004242424242424242`), joined by a separator to another number, or
 *   preceded by an encoded `=` (`card%3D4242...`) cannot be told apart from a non-card.
 * The price is that a non-card of 12+ digits is masked too (an epoch time in milliseconds, a list of
 * IP addresses, the rare hex id whose digits happen to run 12 long); that costs readability, never a
 * card number. Numbers under 12 digits (unix seconds, amounts, dates and ISO timestamps, whose digit
 * groups are broken by `T` and `:`) are left alone.
 */
export function maskCardNumbers(text: string): string {
  return text.replace(DIGIT_RUN, (run) => maskDigits(run, countDigits(run)));
}

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
