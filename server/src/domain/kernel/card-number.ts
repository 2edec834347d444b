// What "looks like a card number" means, in one place (docs/api.md "What is masked and what is refused").
// Three users, one reading of the text:
// - the free-text refusal (free-text.ts, 400 `card_number_in_text`): holdsCardNumber;
// - the masker of everything a person reads (mask.ts: logs, the request log, problems, webhook attempt
//   logs): maskCardNumbers and maskPan;
// - the validator's messages (http/validator-errors.ts: a card number sent where a token belongs):
//   looksLikeCardNumber.
//
// How text is read. A card number can be written in many ways that all mean the same digits to a
// person (issue: 153 of 252 writings got past a rule that knew ASCII digits and seven separators), so
// each character is folded first, one code point at a time:
// - Unicode NFKC (full-width `４`, mathematical `𝟒`, circled `④`, superscript `⁴` become `4`; the
//   full-width hyphen and colon become `-` and `:`);
// - every decimal digit of any script is a digit (Arabic-Indic `٤`, Devanagari `४`, Bengali, Thai, ...);
// - format and other invisible characters (zero-width space, ZWNJ, ZWJ, word joiner, soft hyphen, the
//   combining grapheme joiner, variation selectors, combining marks) are dropped: they join what is on
//   either side;
// - a percent escape (`%20`, `%34`, UTF-8 `%EF%BC%94`, encoded twice or more `%2520`) is read as the
//   character it encodes, so a number is found whether or not the text was decoded first, and the `2`
//   and `0` of an encoded space are never taken for digits of the number;
// - any other character that is not a letter or a digit (space, punctuation, symbol, dash of any kind,
//   `*`, `|`, `#`, `~`, `=`, brackets), and any run of them, separates digit groups; a letter ends the
//   digits (`4242a4242` is two numbers).
// The digits so read form runs of digit groups. Three shapes of ordinary numbers are not card numbers and
// split a run where they stand (so a log line keeps its times and an IP address stays readable in a
// problem, issue 34 item 3): an IPv4 address (exactly four dot-separated groups of at most three digits,
// each at most 255), a calendar date (`2026-11-24`, `24/11/2026`, `11.24.2026`) and a time of day
// (`10:30`, `10:30:00`, `10:30:00.123`). None of them can hold a card number by itself (an address has
// at most 12 digits, a date 8, a time 12); one written to look like a date or an address group by
// group is a deliberate disguise, not a mistake, and is the price of readable logs.

/** The shortest and longest card numbers issued (ISO/IEC 7812: 13 to 19 digits for the card brands). */
export const MIN_CARD_DIGITS = 13;
export const MAX_CARD_DIGITS = 19;
/**
 * The fewest digits the masker hides (spec/resources/tokens.tsp, TokenCreate.card: the API takes
 * 12-digit Maestro numbers, so the log must never hold a 12-digit number in clear either).
 */
export const MIN_MASKED_DIGITS = 12;
const VISIBLE_HEAD = 4;
const VISIBLE_TAIL = 4;

/** The Luhn (mod 10) check digit test; false for anything that is not a non-empty string of ASCII digits. */
export function luhnValid(digits: string): boolean {
  if (!/^[0-9]+$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

// ---------------------------------------------------------------------------------------------------
// Folding: each code point (or percent escape) of the text becomes zero or more folded characters:
// ASCII digits, ASCII letters (any letter of any script reads as `a`), or separators (ASCII punctuation
// as it is, so the shapes above can be told; any other separator as a space).

const DIGIT = 1;
const SEPARATOR = 2;
const LETTER = 3;
const PERCENT = 4;

/** The kind of each ASCII character; anything else is folded first. */
const ASCII_KIND = new Uint8Array(128).fill(SEPARATOR);
for (let c = 48; c <= 57; c++) ASCII_KIND[c] = DIGIT;
for (let c = 65; c <= 90; c++) ASCII_KIND[c] = LETTER;
for (let c = 97; c <= 122; c++) ASCII_KIND[c] = LETTER;
ASCII_KIND[37] = PERCENT;

const IGNORABLE = /^[\p{Cf}\p{Mn}\p{Me}\p{Default_Ignorable_Code_Point}]$/u;
const DECIMAL = /^\p{Nd}$/u;
const ALPHANUMERIC = /^[\p{L}\p{N}]$/u;

/**
 * The value of a decimal digit of any script. Unicode keeps every script's decimal digits as contiguous
 * runs of ten, zero first (a stability guarantee), so the value is the distance from the start of the
 * run, modulo ten (the mathematical digits are five such runs in a row).
 */
function digitValue(cp: number): number {
  let start = cp;
  while (start > 0 && DECIMAL.test(String.fromCodePoint(start - 1))) start--;
  return (cp - start) % 10;
}

/** Folded forms of the non-ASCII code points met so far (bounded: a text cannot grow it without limit). */
const folded = new Map<number, string>();
const FOLD_CACHE_LIMIT = 4096;

/** A non-ASCII code point as folded characters (see the top of this file). */
function foldCodePoint(cp: number): string {
  const known = folded.get(cp);
  if (known !== undefined) return known;
  let out = "";
  for (const ch of String.fromCodePoint(cp).normalize("NFKC")) {
    const code = ch.codePointAt(0) ?? 0;
    if (code < 128) out += ch;
    else if (IGNORABLE.test(ch)) continue;
    else if (DECIMAL.test(ch)) out += String(digitValue(code));
    else out += ALPHANUMERIC.test(ch) ? "a" : " ";
  }
  if (folded.size < FOLD_CACHE_LIMIT) folded.set(cp, out);
  return out;
}

/** A percent escape, possibly encoded again and again (`%2520` is an encoded `%20`): `%`, any `25`s, two hex digits. */
const ESCAPE = /%(?:25)*([0-9A-Fa-f]{2})/y;

/** The byte a percent escape at `i` encodes, and where the escape ends; null when `i` starts none. */
function escapeAt(text: string, i: number): { byte: number; end: number } | null {
  ESCAPE.lastIndex = i;
  const match = ESCAPE.exec(text);
  if (!match) return null;
  return { byte: Number.parseInt(match[1] ?? "", 16), end: ESCAPE.lastIndex };
}

/**
 * A percent-encoded character at `i`: its folded form and where its escapes end. A UTF-8 sequence of
 * escapes is one character (`%EF%BC%94`, a full-width `４`); bytes that are not UTF-8 are separators.
 */
function foldEscape(text: string, i: number): { fold: string; end: number } | null {
  const first = escapeAt(text, i);
  if (!first) return null;
  if (first.byte < 0x80) return { fold: String.fromCharCode(first.byte), end: first.end };
  const length = first.byte >= 0xf0 ? 4 : first.byte >= 0xe0 ? 3 : first.byte >= 0xc0 ? 2 : 0;
  let cp = first.byte & (length === 4 ? 0x07 : length === 3 ? 0x0f : 0x1f);
  let end = first.end;
  for (let k = 1; k < length; k++) {
    const next = text[end] === "%" ? escapeAt(text, end) : null;
    if (!next || (next.byte & 0xc0) !== 0x80) return { fold: " ", end: first.end };
    cp = (cp << 6) | (next.byte & 0x3f);
    end = next.end;
  }
  if (length === 0 || cp > 0x10ffff) return { fold: " ", end: first.end };
  return { fold: foldCodePoint(cp), end };
}

// ---------------------------------------------------------------------------------------------------
// Runs: digit groups with only separators (and dropped characters) between them.

/** One run of digit groups, as the scan hands it over. */
interface Run {
  /** The digits of each group, ASCII. */
  groups: string[];
  /** The folded separator before each group (at most four characters; "" before the first). */
  separators: string[];
  /** For each digit of the run, in order, where it starts and ends in the text (code units). */
  starts: number[];
  ends: number[];
}

interface ScanOptions {
  /** Letters separate digit groups instead of ending the run (maskPan: the whole text is one number). */
  lettersSeparate?: boolean;
  /** Called for every letter read. */
  onLetter?: () => void;
}

/** The state of one scan: the run being read, its open group, the separator since its last group. */
class Scanner {
  run: Run = { groups: [], separators: [], starts: [], ends: [] };
  group = "";
  pending = "";
  stopped = false;

  constructor(
    private readonly visit: (run: Run) => boolean | undefined,
    private readonly options: ScanOptions,
  ) {}

  digit(ch: string, start: number, end: number): void {
    const { run } = this;
    if (this.group === "") {
      run.separators.push(run.groups.length === 0 ? "" : this.pending);
      this.pending = "";
    }
    this.group += ch;
    run.starts.push(start);
    run.ends.push(end);
  }

  separator(ch: string): void {
    if (this.group !== "") {
      this.run.groups.push(this.group);
      this.group = "";
    }
    if (this.run.groups.length > 0 && this.pending.length < 4) this.pending += ch;
  }

  letter(): void {
    if (this.options.lettersSeparate) {
      this.separator(" ");
      return;
    }
    this.options.onLetter?.();
    if (this.group !== "" || this.run.groups.length > 0) this.endRun();
  }

  endRun(): void {
    const { run } = this;
    if (this.group !== "") run.groups.push(this.group);
    this.group = "";
    if (run.groups.length === 0) return;
    if (this.visit(run) === true) this.stopped = true;
    this.run = { groups: [], separators: [], starts: [], ends: [] };
    this.pending = "";
  }

  /** One folded character (of a non-ASCII code point or a percent escape) spanning [start, end). */
  folded(ch: string, start: number, end: number): void {
    const kind = ASCII_KIND[ch.charCodeAt(0)];
    if (kind === DIGIT) this.digit(ch, start, end);
    else if (kind === LETTER) this.letter();
    else this.separator(ch);
  }
}

/**
 * Reads the text once, left to right, and hands every run of digit groups to `visit` (which returns true
 * to stop). Linear in the text: every character is folded once (non-ASCII ones through a cache).
 */
function scan(
  text: string,
  visit: (run: Run) => boolean | undefined,
  options: ScanOptions = {},
  from = 0,
  to = text.length,
): void {
  const scanner = new Scanner(visit, options);
  for (let i = from; i < to && !scanner.stopped; ) {
    const code = text.charCodeAt(i);
    if (code < 128) {
      const kind = ASCII_KIND[code];
      if (kind === DIGIT) scanner.digit(text.charAt(i), i, i + 1);
      else if (kind === LETTER) scanner.letter();
      else if (kind === SEPARATOR) scanner.separator(text.charAt(i));
      else {
        const escaped = foldEscape(text, i);
        if (escaped) {
          for (const ch of escaped.fold) scanner.folded(ch, i, escaped.end);
          i = escaped.end;
          continue;
        }
        scanner.separator("%");
      }
      i++;
      continue;
    }
    const cp = text.codePointAt(i) ?? code;
    const width = cp > 0xffff ? 2 : 1;
    for (const ch of foldCodePoint(cp)) scanner.folded(ch, i, i + width);
    i += width;
  }
  if (!scanner.stopped) scanner.endRun();
}

/** Text that folds to itself: ASCII without a percent escape (most log lines). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: every ASCII character but `%`, control characters included.
const PLAIN = /^[\x00-\x24\x26-\x7f]*$/;

/**
 * In plain text, the runs of at least `n` digits: a digit, then separators and a digit, `n - 1` times or
 * more. Each repetition can match only one way (separators cannot be digits), so a failed attempt costs
 * at most the length of one run, and the match is the whole run, from its first digit.
 */
const plainRuns = (n: number) => new RegExp(`[0-9](?:[^0-9A-Za-z%]*[0-9]){${n - 1},}`, "g");
const PLAIN_RUNS = new Map([MIN_MASKED_DIGITS, MIN_CARD_DIGITS].map((n) => [n, plainRuns(n)]));

/**
 * scan, for a caller that looks only at runs of at least `minDigits` digits: in plain text the regular
 * expression finds those runs, natively (a log line costs a fifth of folding each of its characters),
 * and only they are scanned.
 */
function scanRuns(text: string, minDigits: number, visit: (run: Run) => boolean | undefined): void {
  const runs = PLAIN_RUNS.get(minDigits);
  if (!runs || !PLAIN.test(text)) {
    scan(text, visit);
    return;
  }
  let stop = false;
  const visitOnce = (run: Run) => {
    stop = visit(run) === true;
    return stop;
  };
  for (const match of text.matchAll(runs)) {
    scan(text, visitOnce, {}, match.index, match.index + match[0].length);
    if (stop) return;
  }
}

// ---------------------------------------------------------------------------------------------------
// The shapes of ordinary numbers that are not card numbers (see the top of this file).

const value = (digits: string | undefined) => (digits === undefined ? Number.NaN : Number(digits));
const sized = (digits: string | undefined, min: number, max: number) =>
  digits !== undefined && digits.length >= min && digits.length <= max;

/** How many groups from `at` make an IPv4 address, a date or a time of day; 0 when none. */
function ordinaryShapeAt(run: Run, at: number): number {
  const { groups, separators } = run;
  // Every shape joins its first two groups with `.`, `-`, `/` or `:`, and starts with at most four digits:
  // most groups are decided here, without the checks below.
  const second = separators[at + 1];
  if ((second !== "." && second !== "-" && second !== "/" && second !== ":") || (groups[at]?.length ?? 5) > 4) return 0;
  const g = (k: number) => groups[at + k];
  const sep = (k: number) => separators[at + k];
  // The separator after the shape (before the group that follows it), if any.
  const after = (n: number) => separators[at + n];
  // An IPv4 address: four groups of 1 to 3 digits, each at most 255, joined by single dots, and not part
  // of a longer dotted sequence (a version or a card number written with dots).
  if (
    [0, 1, 2, 3].every((k) => sized(g(k), 1, 3) && value(g(k)) <= 255) &&
    sep(1) === "." &&
    sep(2) === "." &&
    sep(3) === "." &&
    sep(0) !== "." &&
    after(4) !== "."
  ) {
    return 4;
  }
  // A date: year-month-day, or day and month then a four-digit year, with one separator used twice.
  const dateSep = sep(1);
  if (
    (dateSep === "-" || dateSep === "/" || dateSep === ".") &&
    sep(2) === dateSep &&
    sep(0) !== dateSep &&
    after(3) !== dateSep
  ) {
    const [a, b, c] = [g(0), g(1), g(2)];
    const year = (y: string | undefined) => sized(y, 4, 4) && value(y) >= 1900 && value(y) <= 2199;
    const dayMonth = (d: string | undefined, m: string | undefined) =>
      sized(d, 1, 2) && sized(m, 1, 2) && value(d) >= 1 && value(d) <= 31 && value(m) >= 1 && value(m) <= 12;
    if (year(a) && dayMonth(c, b)) return 3;
    if (year(c) && (dayMonth(a, b) || dayMonth(b, a))) return 3;
  }
  // A time of day: hours and minutes, seconds, and a fraction of at most six digits.
  if (
    sep(0) !== ":" &&
    sep(1) === ":" &&
    sized(g(0), 1, 2) &&
    value(g(0)) <= 23 &&
    sized(g(1), 2, 2) &&
    value(g(1)) <= 59
  ) {
    let n = 2;
    if (sep(2) === ":" && sized(g(2), 2, 2) && value(g(2)) <= 60) {
      n = 3;
      if (sep(3) === "." && sized(g(3), 1, 6)) n = 4;
    }
    if (after(n) !== ":") return n;
  }
  return 0;
}

/** The parts of a run that can hold a card number: [first group, end group) between ordinary shapes. */
function segmentsOf(run: Run): [number, number][] {
  const segments: [number, number][] = [];
  let from = 0;
  for (let at = 0; at < run.groups.length; ) {
    const shape = ordinaryShapeAt(run, at);
    if (shape === 0) {
      at++;
      continue;
    }
    if (at > from) segments.push([from, at]);
    at += shape;
    from = at;
  }
  if (run.groups.length > from) segments.push([from, run.groups.length]);
  return segments;
}

/**
 * Whether consecutive groups of [from, to) make 13 to 19 digits that pass the Luhn check. Every window
 * of groups is checked in constant time from prefix sums of the digits and of their doubles, by the
 * parity of their place (Luhn doubles every second digit from the right), so a body of 100 KB of
 * one-digit groups costs a few milliseconds, not a Luhn check of each window's string.
 */
function cardInSegment(groups: string[], from: number, to: number): boolean {
  let n = 0;
  for (let g = from; g < to; g++) n += groups[g]?.length ?? 0;
  // Where each group ends, in digits from the segment's start; and the prefix sums, for each parity of
  // place, of the digits plain and doubled (Luhn's doubling: 2d, less 9 past 9). Every index read below
  // is in range by construction (the loops' bounds); `?? 0` only tells the compiler so, without a cast
  // and without leaving the typed arrays' fast path.
  const ends = new Int32Array(to - from);
  const plain = [new Int32Array(n + 1), new Int32Array(n + 1)] as const;
  const doubled = [new Int32Array(n + 1), new Int32Array(n + 1)] as const;
  let [plainEven, plainOdd, doubledEven, doubledOdd] = [0, 0, 0, 0];
  let i = 0;
  for (let g = from; g < to; g++) {
    const group = groups[g] ?? "";
    for (let k = 0; k < group.length; k++, i++) {
      const d = group.charCodeAt(k) - 48;
      const twice = d * 2 > 9 ? d * 2 - 9 : d * 2;
      if (i % 2 === 0) {
        plainEven += d;
        doubledEven += twice;
      } else {
        plainOdd += d;
        doubledOdd += twice;
      }
      plain[0][i + 1] = plainEven;
      plain[1][i + 1] = plainOdd;
      doubled[0][i + 1] = doubledEven;
      doubled[1][i + 1] = doubledOdd;
    }
    ends[g - from] = i;
  }
  const sum = (a: number, b: number) => {
    // The last digit (b - 1) is not doubled; nor is every second one before it.
    const p = (b - 1) % 2 === 0 ? plain[0] : plain[1];
    const q = (b - 1) % 2 === 0 ? doubled[1] : doubled[0];
    return (p[b] ?? 0) - (p[a] ?? 0) + (q[b] ?? 0) - (q[a] ?? 0);
  };
  for (let first = 0; first < ends.length; first++) {
    const a = first === 0 ? 0 : (ends[first - 1] ?? 0);
    for (let last = first; last < ends.length; last++) {
      const b = ends[last] ?? 0;
      if (b - a > MAX_CARD_DIGITS) break;
      if (b - a >= MIN_CARD_DIGITS && sum(a, b) % 10 === 0) return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------
// The three questions.

/**
 * Whether the text holds a card number: consecutive digit groups of a run that make 13 to 19 digits and
 * pass the Luhn check. Groups are taken whole, so a card number written next to another number is found
 * (`order 12, card 4242 4242 4242 4242`), while digits are never borrowed from the middle of a group:
 * one group of more than 19 digits (a long reference) is not a card number. What is not found: a number
 * that fails Luhn (nine in ten random numbers, most phone numbers), fewer than 13 digits (amounts, most
 * phone numbers), digits broken by a letter, and dates, times and IPv4 addresses.
 */
export function holdsCardNumber(text: string): boolean {
  let found = false;
  scanRuns(text, MIN_CARD_DIGITS, (run) => {
    if (run.starts.length < MIN_CARD_DIGITS) return false;
    for (const [from, to] of segmentsOf(run)) {
      if (cardInSegment(run.groups, from, to)) {
        found = true;
        return true;
      }
    }
    return false;
  });
  return found;
}

/**
 * Whether a value sent alone is a card number (http/validator-errors.ts: a card number where a token's
 * id belongs): nothing but 12 to 19 digits and separators, whatever the digits' script, and not an
 * ordinary shape (an IPv4 address has 12 digits at most), nor led by `+` (a phone number). Not Luhn-gated: a mistyped card number is
 * still one, and the message only says where a card number goes.
 */
export function looksLikeCardNumber(value: unknown): boolean {
  const text = typeof value === "number" && Number.isInteger(value) ? String(value) : value;
  if (typeof text !== "string") return false;
  // An international phone number (`+44 20 7946 0000`, 12 digits) is not a card number sent by mistake.
  if (/^\s*[+\uff0b]/.test(text)) return false;
  let runs = 0;
  let alone = true;
  const onLetter = () => {
    alone = false;
  };
  scan(
    text,
    (run) => {
      runs++;
      const segments = segmentsOf(run);
      const whole = segments.length === 1 && segments[0]?.[0] === 0 && segments[0]?.[1] === run.groups.length;
      alone = alone && whole && run.starts.length >= MIN_MASKED_DIGITS && run.starts.length <= MAX_CARD_DIGITS;
      return !alone;
    },
    { onLetter },
  );
  return runs === 1 && alone;
}

/**
 * The spans of the text to star: every digit of a card-like part of a run but its first four and last
 * four. Spans come in text order; a code point that holds several digits (`⑽`) is starred when any of
 * them is hidden.
 */
function hiddenSpans(text: string, whole: boolean): number[] {
  const spans: number[] = [];
  const hide = (run: Run, first: number, last: number) => {
    const count = last - first;
    const hideAll = count < MIN_MASKED_DIGITS;
    for (let d = first; d < last; d++) {
      const seen = d - first;
      if (!hideAll && (seen < VISIBLE_HEAD || seen >= count - VISIBLE_TAIL)) continue;
      // d is within [first, last), a range of the run's digits: `?? 0` is never taken (no cast needed).
      const start = run.starts[d] ?? 0;
      if (spans.length > 0 && spans[spans.length - 2] === start) continue;
      spans.push(start, run.ends[d] ?? start);
    }
  };
  if (whole) {
    scan(
      text,
      (run) => {
        hide(run, 0, run.starts.length);
        return false;
      },
      { lettersSeparate: true },
    );
    return spans;
  }
  scanRuns(text, MIN_MASKED_DIGITS, (run) => {
    // Where each group starts, in digits from the run's start (and where the last one ends).
    const offsets = [0];
    let total = 0;
    for (const group of run.groups) {
      total += group.length;
      offsets.push(total);
    }
    for (const [from, to] of segmentsOf(run)) {
      const first = offsets[from] ?? 0;
      const last = offsets[to] ?? total;
      if (last - first >= MIN_MASKED_DIGITS) hide(run, first, last);
    }
    return false;
  });
  return spans;
}

/** The text with each span replaced by one `*`. */
function star(text: string, spans: number[]): string {
  if (spans.length === 0) return text;
  let out = "";
  let at = 0;
  for (let k = 0; k < spans.length; k += 2) {
    out += `${text.slice(at, spans[k])}*`;
    at = spans[k + 1] ?? text.length;
  }
  return out + text.slice(at);
}

/**
 * Masks every card-number-like part of arbitrary text (a log line, a JSON body, a URL with a query
 * string, encoded or not) so only its first four and last four digits remain: each hidden digit becomes
 * one `*`, separators stay where they are (`4242 **** **** 4242`).
 *
 * Every run of 12 or more digits is masked, whether or not it passes the Luhn check and whatever its
 * neighbours:
 * - not Luhn-gated: a mistyped card number (the 400 example in tokens.tsp, 4242424242424241) is still
 *   a real customer's number with one digit off, and a Luhn-gated mask would leave it in the log;
 * - from 12 digits, not 13: the API accepts 12-digit numbers (Maestro issues them);
 * - runs longer than 19 digits are masked whole, and letters next to a run do not protect it: a card
 *   number glued to other digits (`00004242424242424242`) or joined by separators to another number
 *   cannot be told apart from a non-card.
 * The price is that a non-card of 12+ digits is masked too (an epoch time in milliseconds, a list of
 * numbers); that costs readability, never a card number. Runs under 12 digits, dates, times of day and
 * IPv4 addresses are left alone. Masked text stays masked when masked again (a `*` is a separator, and
 * what is left visible is at most eight digits per number).
 */
export function maskCardNumbers(text: string): string {
  return star(text, hiddenSpans(text, false));
}

/**
 * `4242424242424242` → `4242********4242`: the only form in which a card number may be shown. Every digit
 * of the text counts, letters included; below 12 digits, first four plus last four would leave (almost)
 * nothing hidden, so such input is starred entirely rather than echoed.
 */
export function maskPan(pan: string): string {
  return star(pan, hiddenSpans(pan, true));
}
