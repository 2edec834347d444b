// Test support, not used by the server: the ways a card number gets written that the recogniser
// (card-number.ts) must find (issue 35 item 2, and more), the ordinary text it must leave alone, and the
// disguises of a credential (credentials.ts, issue 35 item 6). One table for the unit tests beside them
// and the e2e suites that send each writing through the API (test/e2e/hostile.test.ts,
// free-text.test.ts: `@payments/server/hostile-writings`).

/** Luhn-valid test numbers of 13 to 19 digits, of several brands. */
export const TEST_PANS = [
  "4242424242424242",
  "5555555555554444",
  "378282246310005",
  "6011111111111117",
  "4000056655665556",
  "4222222222222",
  "6759649826438453128",
] as const;

/** A number's digits with `sep` between groups of four (the last group takes the rest). */
function grouped(pan: string, sep: string, size = 4): string {
  return (pan.match(new RegExp(`.{1,${size}}`, "g")) ?? []).join(sep);
}

/** A number's ASCII digits written in the decimal digits of a script, from that script's zero. */
function inDigits(pan: string, zero: number): string {
  return [...pan].map((d) => String.fromCodePoint(zero + Number(d))).join("");
}

/** Every digit followed by `mark` (an invisible character, a combining mark). */
const between = (pan: string, mark: string) => [...pan].join(mark);

const SUPERSCRIPT = ["⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"];
const CIRCLED = ["⓪", "①", "②", "③", "④", "⑤", "⑥", "⑦", "⑧", "⑨"];

export interface Writing {
  name: string;
  text: string;
}

const writers: [string, (pan: string) => string][] = [
  // Separators between groups.
  ["with colons", (p) => grouped(p, ":")],
  ["with bars", (p) => grouped(p, "|")],
  ["with asterisks", (p) => grouped(p, "*")],
  ["with hashes", (p) => grouped(p, "#")],
  ["with tildes", (p) => grouped(p, "~")],
  ["with equals signs", (p) => grouped(p, "=")],
  ["in brackets", (p) => `(${grouped(p, ")(")})`],
  ["with en dashes", (p) => grouped(p, "\u2013")],
  ["with em dashes", (p) => grouped(p, "\u2014")],
  ["with minus signs", (p) => grouped(p, "\u2212")],
  ["with full-width hyphens", (p) => grouped(p, "\uff0d")],
  ["with full-width colons", (p) => grouped(p, "\uff1a")],
  ["with runs of several separators", (p) => grouped(p, " -- ")],
  ["with runs of spaces", (p) => grouped(p, "     ")],
  ["with tabs and newlines", (p) => grouped(p, "\t\n")],
  ["with slashes and backslashes", (p) => grouped(p, "/\\")],
  ["with bullets", (p) => grouped(p, " \u2022 ")],
  ["with middle dots", (p) => grouped(p, "\u00b7")],
  ["with no-break spaces", (p) => grouped(p, "\u00a0")],
  ["with narrow no-break spaces", (p) => grouped(p, "\u202f")],
  ["with ideographic spaces", (p) => grouped(p, "\u3000")],
  ["with underscores", (p) => grouped(p, "_")],
  ["with plus signs", (p) => grouped(p, "+")],
  ["with commas", (p) => grouped(p, ", ")],
  ["with dots", (p) => grouped(p, ".")],
  ["as printed on an Amex card", (p) => `${p.slice(0, 4)} ${p.slice(4, 10)} ${p.slice(10)}`],
  ["one digit at a time", (p) => between(p, " ")],
  ["percent-encoded spaces", (p) => grouped(p, "%20")],
  ["percent-encoded colons", (p) => grouped(p, "%3A")],
  ["double-encoded spaces", (p) => grouped(p, "%2520")],
  ["triple-encoded dashes", (p) => grouped(p, "%25252D")],
  // Invisible characters between every digit.
  ["with zero-width spaces", (p) => between(p, "\u200b")],
  ["with zero-width non-joiners", (p) => between(p, "\u200c")],
  ["with zero-width joiners", (p) => between(p, "\u200d")],
  ["with word joiners", (p) => between(p, "\u2060")],
  ["with soft hyphens", (p) => between(p, "\u00ad")],
  ["with combining grapheme joiners", (p) => between(p, "\u034f")],
  ["with byte order marks", (p) => between(p, "\ufeff")],
  ["with variation selectors", (p) => between(p, "\ufe0f")],
  ["with combining underlines", (p) => between(p, "\u0332")],
  ["as keycaps", (p) => between(p, "\ufe0f\u20e3")],
  // Other digits.
  ["in full-width digits", (p) => inDigits(p, 0xff10)],
  ["in full-width digits with full-width spaces", (p) => grouped(inDigits(p, 0xff10), "\u3000")],
  ["in Arabic-Indic digits", (p) => inDigits(p, 0x660)],
  ["in Eastern Arabic-Indic (Persian) digits", (p) => grouped(inDigits(p, 0x6f0), " ")],
  ["in Devanagari digits", (p) => inDigits(p, 0x966)],
  ["in Bengali digits", (p) => inDigits(p, 0x9e6)],
  ["in Thai digits", (p) => grouped(inDigits(p, 0xe50), "-")],
  ["in mathematical bold digits", (p) => inDigits(p, 0x1d7ce)],
  ["in mathematical double-struck digits", (p) => inDigits(p, 0x1d7d8)],
  ["in mathematical monospace digits", (p) => grouped(inDigits(p, 0x1d7f6), " ")],
  ["in superscript digits", (p) => [...p].map((d) => SUPERSCRIPT[Number(d)]).join("")],
  ["in circled digits", (p) => [...p].map((d) => CIRCLED[Number(d)]).join("")],
  ["in percent-encoded full-width digits", (p) => encodeURIComponent(inDigits(p, 0xff10))],
  [
    "in mixed scripts with zero-width joiners and en dashes",
    (p) =>
      grouped(
        [...p]
          .map((d, i) => String.fromCodePoint((i % 3 === 0 ? 0xff10 : i % 3 === 1 ? 0x660 : 0x30) + Number(d)))
          .join("\u200d"),
        "\u2013",
        7,
      ),
  ],
];

/** Every writing, each with one of the test numbers (in turn). */
export const CARD_WRITINGS: Writing[] = writers.map(([name, write], i) => ({
  name,
  text: write(TEST_PANS[i % TEST_PANS.length] ?? ""),
}));

/** One test number written one way, by the writing's name. */
export function writeCard(name: string, pan: string): string {
  const writer = writers.find(([n]) => n === name);
  if (!writer) throw new Error(`no writing named ${name}`);
  return writer[1](pan);
}

/**
 * Text that is not a card number for the free-text rule; `masked` is how the masker shows it, when it
 * masks it (a run of 12 digits or more that fails Luhn is still masked: it may be a mistyped card).
 */
export const NOT_CARDS: (Writing & { masked?: string })[] = [
  { name: "a date and time", text: "2026-11-24 10:30:00" },
  { name: "a date and time with a fraction", text: "2026-11-21 10:15:30.123456" },
  { name: "an ISO timestamp", text: "2026-11-21T10:15:30.123Z" },
  { name: "a day-first date and time", text: "24/11/2026 10:30:00" },
  { name: "a dotted date and a time range", text: "24.11.2026, 10:30 – 14:45" },
  { name: "a date in Arabic-Indic digits", text: "٢٠٢٦-١١-٢٤ ١٠:٣٠:٠٠" },
  { name: "an IPv4 address", text: "169.254.169.254" },
  { name: "two IPv4 addresses and a port", text: "from 203.0.113.7:8443 via 198.51.100.23" },
  { name: "a phone number", text: "+55 11 91234 5678", masked: "+55 11 ***** 5678" },
  { name: "a phone number and a date", text: "Call +1 415 555 0100 on 2026-11-24 at 10:30" },
  { name: "an amount", text: "1,234,567.89 USD" },
  { name: "a unix time", text: "order 1763720467" },
  { name: "a short number with a letter", text: "4242a4242b4242c4242" },
  { name: "a version", text: "node v1.20.3" },
  {
    name: "ids",
    text: "fp_3f9c2a7be81d4c0f9a6e5d2b1c0a9f8e f47ac10b-58cc-4372-a567-0e02b2c3d479 req_2WsX3EdC4RfV5TgB6YhN7UjM",
  },
  { name: "a number that fails the Luhn check", text: "4242 4242 4242 4241", masked: "4242 **** **** 4241" },
  {
    name: "a reference of more than 19 digits",
    text: "ref 42424242424242420000",
    masked: "ref 4242************0000",
  },
  { name: "a Japanese date", text: "２０２６年１１月２４日" },
  { name: "a percent sign before digits", text: "discount 50%, 20 items" },
];

/** A credential's type marker and random part (`key_test_` and 32 characters). */
export function partsOf(secret: string): { marker: string; random: string } {
  const marker = /^(key_(?:test|live)_|whsec_|csess_)/.exec(secret)?.[1] ?? "";
  return { marker, random: secret.slice(marker.length) };
}

const b64url = (text: string) => btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

export interface CredentialWriting {
  name: string;
  write: (secret: string) => string;
  /** Whether free text holding it is refused (secret_in_text). */
  refused: boolean;
  /** Whether the masker recognises it (logs, the request log, problems). */
  masked: boolean;
}

/** The disguises of a credential (a key or webhook secret): how each is written. */
export const CREDENTIAL_WRITINGS: CredentialWriting[] = [
  { name: "as issued", write: (s) => s, refused: true, masked: true },
  {
    name: "with an upper-case marker",
    write: (s) => partsOf(s).marker.toUpperCase() + partsOf(s).random,
    refused: true,
    masked: true,
  },
  {
    name: "with a dashed marker",
    write: (s) => partsOf(s).marker.replaceAll("_", "-") + partsOf(s).random,
    refused: true,
    masked: true,
  },
  {
    name: "with a capitalised dashed marker",
    write: (s) =>
      partsOf(s)
        .marker.split("_")
        .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
        .join("-") + partsOf(s).random,
    refused: true,
    masked: true,
  },
  { name: "with its `_` percent-encoded", write: (s) => s.replaceAll("_", "%5F"), refused: true, masked: true },
  { name: "with its `_` encoded twice", write: (s) => s.replaceAll("_", "%255F"), refused: true, masked: true },
  { name: "with its `_` encoded three times", write: (s) => s.replaceAll("_", "%25255F"), refused: true, masked: true },
  { name: "in base64", write: (s) => btoa(s), refused: true, masked: true },
  { name: "in base64url", write: (s) => b64url(s), refused: true, masked: true },
  { name: "as HTTP Basic credentials", write: (s) => `Basic ${btoa(`${s}:`)}`, refused: true, masked: true },
  { name: "in base64 JSON", write: (s) => btoa(JSON.stringify({ key: s })), refused: true, masked: true },
  {
    name: "in base64url JSON, one byte in",
    write: (s) => b64url(JSON.stringify({ k: s })),
    refused: true,
    masked: true,
  },
  {
    name: "with its marker apart in a query string",
    write: (s) => `a=${partsOf(s).marker}&b=${partsOf(s).random}`,
    refused: true,
    masked: true,
  },
  {
    name: "in full-width letters",
    write: (s) => s.normalize("NFKC").replace(/[!-~]/g, (c) => String.fromCodePoint(c.charCodeAt(0) + 0xfee0)),
    refused: true,
    // Not masked, nor spliced with zero-width spaces: no transport writes a secret that way, and a
    // reader must first undo it (docs/api.md "What is masked and what is refused").
    masked: false,
  },
  { name: "with zero-width spaces", write: (s) => [...s].join("\u200b"), refused: true, masked: false },
  { name: "as its random part alone", write: (s) => partsOf(s).random, refused: false, masked: true },
];
