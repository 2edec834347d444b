import { maskCardNumbers } from "./card-number.ts";

// What looks like a credential this API issues, in one place (docs/api.md "What is masked and what is
// refused"): the masker (mask.ts, maskSensitive: logs, the request log, problems, webhook attempt logs)
// and the free-text refusal (free-text.ts, 400 `secret_in_text`) read text with these shapes.
//
// The credentials, by their type markers (the part a person and a secret scanner recognise):
// - service-key secrets `key_test_…` / `key_live_…` + 32 base62 (spec/resources/service-keys.tsp,
//   ServiceKeyWithSecret.secret);
// - webhook signing secrets `whsec_…` + 32 base62 (spec/resources/webhook-endpoints.tsp,
//   WebhookEndpointWithSecret);
// - console session tokens `csess_…` + 43 base62 (the session cookie, docs/console.md "The console");
// - hosted-page tokens `v1.<expiry>.<nonce>.<signature>` (PaymentLinkPay.page_token in
//   spec/resources/payment-links.tsp).
//
// The disguises recognised (issue 35 item 6), because each is what a real tool or a real mistake makes:
// - the marker in any case, with `-` for `_` (`KEY_TEST_`, `Key-Test-`: a config system that upper-cases
//   names, a slug), and with its `_` percent-encoded once or more (`%5F`, `%255F`, `%25255F`: a URL
//   encoded by two or three layers of proxies or clients);
// - base64 and base64url of text holding a secret (HTTP Basic credentials `base64(key:)`, a JWT or a
//   blob that carries one), found by the marker's encoding at each of the three byte offsets;
// - the marker split from its random part in a query string (`?a=key_test_&b=<32 chars>`: a client that
//   sends the parts as two parameters);
// - for masking only, the random part alone: a standalone run of exactly 32 or 43 letters and digits
//   mixing upper and lower case (what a key, a webhook secret or a session token is without its
//   marker; a hex digest or a UUID is never masked by it, ids never: they have a prefix).
// Not recognised, and why: a secret split across more than one parameter or reordered (the parts
// reassembled in any order cannot be told from ordinary parameters), encodings that are not transport
// encodings (hex, base32, ROT13, gzip: deliberate concealment, not a leak), and base64 of a marker in
// another case. Refusal does not take the random part alone either: a 32-character external reference
// in a metadata value is common and is not ours to refuse.

/** A marker's `_`: `_` or `-`, or `_` percent-encoded once or more. */
const SEP = "(?:[_-]|%(?:25)*(?:5F|2D))";
/** The type markers, in any case (the `i` flag of the expressions below). */
const MARKER = `(?:key${SEP}(?:test|live)|whsec|csess)${SEP}`;
/** A query string's gap between a bare marker and its random part in another parameter (`&b=`). */
const QUERY_GAP = String.raw`(?:&|%26)[^=&\s]{0,40}(?:=|%3D)`;
/** A page token: `v1`, the expiry, then the nonce and the signature. */
const PAGE_TOKEN = String.raw`(v1\.[0-9]{1,12}\.)([0-9A-Za-z]{4,}\.[0-9A-Za-z_-]+)`;

/**
 * For masking: a marker and at least five characters of random part (any length is masked, not only the
 * issued one: a secret cut short, or with characters added, is still most of a secret), the split form,
 * and page tokens.
 */
const CREDENTIAL = new RegExp(`(${MARKER})(${QUERY_GAP})?([0-9A-Za-z]{5,})|${PAGE_TOKEN}`, "gi");

/**
 * For masking: a random part alone (see the top of this file): 43 or 32 letters and digits, not part of
 * a longer word or an id. Whether it mixes upper and lower case is checked on each match (lookarounds at
 * every position cost more than the rest of the masking of a log line).
 */
const RANDOM_ALONE = /(^|[^0-9A-Za-z_])([0-9A-Za-z]{43}|[0-9A-Za-z]{32})(?![0-9A-Za-z_])/g;
const mixedCase = (text: string) => /[A-Z]/.test(text) && /[a-z]/.test(text);

/**
 * For refusal: a marker that starts a word, with at least 16 characters of random part (so that a
 * phrase such as `key_test_results` is not taken for a key), the split form, and whole page tokens.
 */
const CREDENTIAL_IN_TEXT = new RegExp(
  String.raw`(?<![0-9A-Za-z])${MARKER}(?:${QUERY_GAP})?[0-9A-Za-z]{16,}|(?<![0-9A-Za-z])v1\.[0-9]{10}\.[0-9A-Za-z]{16}\.[0-9A-Za-z_-]{20,}`,
  "i",
);

/**
 * The base64 (and base64url) characters fully decided by a marker's bytes, at each of the three byte
 * offsets a marker can have in the encoded text: whatever surrounds it, these characters appear in the
 * encoding.
 */
function encodedCores(marker: string): string[] {
  const cores: string[] = [];
  for (const [offset, first] of [
    [0, 0],
    [1, 2],
    [2, 3],
  ] as const) {
    const encoded = btoa("\0".repeat(offset) + marker);
    const last = Math.floor((8 * (offset + marker.length)) / 6);
    const core = encoded.slice(first, last);
    cores.push(core, core.replaceAll("+", "-").replaceAll("/", "_"));
  }
  return cores;
}
const ENCODED_MARKER = new RegExp(
  [...new Set(["key_test_", "key_live_", "whsec_", "csess_"].flatMap(encodedCores))]
    .map((core) => core.replace(/[+/]/g, "\\$&"))
    .join("|"),
  "g",
);
/** The same, without the `g` flag: `test` on a global expression would move its `lastIndex`. */
const ENCODED_MARKER_ANYWHERE = new RegExp(ENCODED_MARKER.source);
const isBase64 = (ch: string | undefined) => ch !== undefined && /[0-9A-Za-z+/_-]/.test(ch);

/**
 * Where the rest of each base64 run that holds an encoded marker starts and ends: from the end of the
 * marker's encoding to the end of the run (a base64 run cannot be told from the text before it, which
 * holds nothing secret, so what precedes the marker stays as written).
 */
function encodedRuns(text: string): [number, number][] {
  const runs: [number, number][] = [];
  for (const match of text.matchAll(ENCODED_MARKER)) {
    const start = match.index + match[0].length;
    if (start <= (runs.at(-1)?.[1] ?? -1)) continue;
    let end = start;
    while (isBase64(text[end])) end++;
    while (text[end] === "=") end++;
    if (end > start) runs.push([start, end]);
  }
  return runs;
}

/**
 * Characters of a credential's random part that stay visible after its type marker. A random part no
 * longer than that (a listed key prefix, `key_test_abcd`) is not matched at all: it shows nothing more.
 */
const CREDENTIAL_VISIBLE = 4;

/**
 * `key_live_4fQxT2…` → `key_live_4fQx…`: every credential this API issues, masked in arbitrary text to its
 * type marker (as written) and its first four random characters, the listing's `prefix`: enough for a
 * person to tell which key, endpoint secret or session it was, and 24 bits of a 190-bit secret, which
 * guess nothing. The rest is replaced by one `…`, so even its length is hidden. A page token keeps its
 * version and expiry (not secret), then four characters of the nonce. A base64 run holding a credential
 * is shown up to the end of the marker's encoding; a random part alone, its first four characters. Masked text stays as it is.
 */
export function maskCredentials(text: string): string {
  let out = text;
  const runs = encodedRuns(out);
  for (const [start, end] of runs.reverse()) out = `${out.slice(0, start)}…${out.slice(end)}`;
  out = out.replace(
    CREDENTIAL,
    (_match, marker?: string, gap?: string, secret?: string, pageMarker?: string, pageRest?: string) => {
      const head = (marker ?? pageMarker ?? "") + (gap ?? "");
      const rest = secret ?? pageRest ?? "";
      const shown = rest.length <= CREDENTIAL_VISIBLE ? head + rest : `${head}${rest.slice(0, CREDENTIAL_VISIBLE)}…`;
      // A page token's expiry is ten digits after the `1` of `v1`: a nonce that starts with a digit would
      // join them into a run of twelve, which the card mask (run after this one) reads as a card number
      // and stars, expiry included. Then none of the nonce is shown, and the expiry stays readable.
      if (pageMarker !== undefined && maskCardNumbers(shown) !== shown) return `${head}…`;
      return shown;
    },
  );
  return out.replace(RANDOM_ALONE, (match, before: string, random: string) =>
    mixedCase(random) ? `${before}${random.slice(0, CREDENTIAL_VISIBLE)}…` : match,
  );
}

/** Characters that are invisible or mean nothing to a reader, dropped before looking for a marker. */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

/**
 * Whether free text holds a credential this API issues (free-text.ts): a marker (any case, `-` or `_`,
 * percent-encoded or not) with the random part, the split form, a page token, or base64 holding one;
 * read as written and percent-decoded (up to three layers: a URL field), after NFKC and with
 * invisible characters dropped (a full-width or zero-width-spliced key is
 * still the key to whoever reads it).
 */
export function holdsCredential(text: string): boolean {
  let decoded = text;
  for (let layer = 0; layer < 3 && /%[0-9A-Fa-f]{2}/.test(decoded); layer++) decoded = percentDecoded(decoded);
  return [text, decoded].some((t) => {
    const plain = t.normalize("NFKC").replace(INVISIBLE, "");
    return CREDENTIAL_IN_TEXT.test(plain) || ENCODED_MARKER_ANYWHERE.test(plain);
  });
}

/** Every well-formed UTF-8 run of percent escapes decoded, the rest left as it is (a URL in free text). */
function percentDecoded(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (escapes) => {
    try {
      return decodeURIComponent(escapes);
    } catch {
      return escapes;
    }
  });
}
