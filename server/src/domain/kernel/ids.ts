import { randomFillSync } from "node:crypto";
import type { IdPrefix } from "../areas.ts";

// Every id is a prefix, an underscore and 24 base62 characters: 8 that encode the millisecond it was
// made, then 16 random ones (about 95 bits from the CSPRNG, so an id is still unguessable). The spec
// pins each prefix with a @pattern (spec/common/ids.tsp); this is the only place ids are made.
//
// Why the time first: every collection is indexed by id, and an index whose keys arrive in order takes
// each new one at its end, on the page the previous one went to. Fully random ids land each on its own
// page somewhere in the index, and on SQLite every page a commit touches is written to the log again
// whole, so a charge's records (its charge, evaluation, three events, ledger entry) would cost a page
// each in every id index instead of sharing the last one (docs/operating.md "Durability on SQLite").
// MongoDB's own ObjectIds start with the time for the same reason.

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// Each area declares the prefixes of the ids it makes (its area.ts `idPrefixes`); the list of areas
// (../areas.ts) derives IdPrefix from them, so newId takes no prefix an area has not declared.
export type { IdPrefix };

/** Random bytes drawn ahead in one call: an id needs about 17, and a call per id would cost more than the id. */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

function randomByte(): number {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  // poolAt < pool.length here (refilled above): `?? 0` is never taken.
  return pool[poolAt++] ?? 0;
}

/**
 * `length` random base62 characters from the CSPRNG, without modulo bias: a byte of 248 or more (the
 * part of 0-255 that 62 does not divide evenly) is drawn again.
 */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

/** Milliseconds since the epoch in 8 base62 characters, most significant first (enough until the year 8900). */
function timeBase62(ms: number): string {
  let out = "";
  for (let i = 0, rest = ms; i < 8; i++, rest = Math.floor(rest / 62)) out = BASE62[rest % 62] + out;
  return out;
}

/**
 * The clock ids are stamped with: the process's own, not the domain's injected one, so ids keep their
 * order whatever a test does with its clock. What compares times with ids (idFloor) reads this one.
 */
export const idNow = (): number => Date.now();

const RANDOM_CHARS = 16;
const TIME_CHARS = 8;
/** 2^32, the base of the two limbs a 64-bit step is carried in. */
const LIMB = 2 ** 32;

// The last id's time and random part in this process: ids made in the same millisecond must still sort in
// the order they were made, since the event stream reads that order from them (webhooks/events.ts across
// a sandbox clock reset). The next one in that millisecond adds a random step of up to 2^64 to the random
// part, so it stays as hard to guess from its neighbour as a fresh one.
//
// The random part is kept as its 16 base62 digits, most significant first, and the arithmetic is done on
// them digit by digit. It was BigInt arithmetic and strings built a character at a time, which made
// newId a tenth of every byte a charge allocated (issue 36, `npm run bench:alloc`): each of a charge's
// dozen ids cost a few kilobytes of short-lived BigInts and partial strings, and allocation per request
// is what sets the rate of young-generation collections.
let lastMs = 0;
const lastRandom = new Uint8Array(RANDOM_CHARS);
const stepDigits = new Uint8Array(RANDOM_CHARS);
/** The id's 24 characters after the prefix, as Latin-1 bytes, turned into one string at the end. */
const idChars = Buffer.alloc(TIME_CHARS + RANDOM_CHARS);

/** Fills `digits` with uniform random base62 digits (randomBase62's draw, as digit values). */
function randomDigits(digits: Uint8Array, count: number): void {
  for (let i = 0; i < count; ) {
    const byte = randomByte();
    if (byte < 248) digits[i++] = byte % 62;
  }
}

/** A fresh random part for a new millisecond: a uniform 16-digit number, halved (room to step within the ms). */
function freshRandom(): void {
  randomDigits(lastRandom, RANDOM_CHARS);
  let carry = 0;
  for (let i = 0; i < RANDOM_CHARS; i++) {
    const value = carry * 62 + (lastRandom[i] ?? 0);
    lastRandom[i] = value >> 1;
    carry = value & 1;
  }
}

/**
 * The next step within one millisecond, 1 + (an 11-digit random base62 number mod 2^64), as 16 base62
 * digits in stepDigits. The 64-bit value is carried in two 32-bit limbs, so every intermediate is an
 * exact integer of a double.
 */
function nextStep(): void {
  randomDigits(stepDigits, 11);
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < 11; i++) {
    const low = lo * 62 + (stepDigits[i] ?? 0);
    lo = low % LIMB;
    hi = (hi * 62 + Math.floor(low / LIMB)) % LIMB;
  }
  // + 1, carried into the high limb (a step of 2^64 - 1 + 1 still fits in 16 digits).
  lo += 1;
  let top = 0;
  if (lo === LIMB) {
    lo = 0;
    hi += 1;
    if (hi === LIMB) {
      hi = 0;
      top = 1;
    }
  }
  // To base62, least significant digit last: repeated division of top·2^64 + hi·2^32 + lo by 62.
  for (let i = RANDOM_CHARS - 1; i >= 0; i--) {
    const upper = top * LIMB + hi;
    top = 0;
    hi = Math.floor(upper / 62);
    const rest = (upper % 62) * LIMB + lo;
    lo = Math.floor(rest / 62);
    stepDigits[i] = rest % 62;
  }
}

/** lastRandom += stepDigits; false (lastRandom unchanged) when the sum would not fit in 16 digits. */
function addStep(): boolean {
  let carry = 0;
  for (let i = RANDOM_CHARS - 1; i >= 0; i--)
    carry = Math.floor(((lastRandom[i] ?? 0) + (stepDigits[i] ?? 0) + carry) / 62);
  if (carry > 0) return false;
  for (let i = RANDOM_CHARS - 1; i >= 0; i--) {
    const sum = (lastRandom[i] ?? 0) + (stepDigits[i] ?? 0) + carry;
    lastRandom[i] = sum % 62;
    carry = sum >= 62 ? 1 : 0;
  }
  return true;
}

export function newId(prefix: IdPrefix): string {
  const now = idNow();
  nextStep();
  if (now !== lastMs || !addStep()) {
    lastMs = now;
    freshRandom();
  }
  for (let i = TIME_CHARS - 1, rest = lastMs; i >= 0; i--, rest = Math.floor(rest / 62)) {
    idChars[i] = BASE62.charCodeAt(rest % 62);
  }
  for (let i = 0; i < RANDOM_CHARS; i++) idChars[TIME_CHARS + i] = BASE62.charCodeAt(lastRandom[i] ?? 0);
  return `${prefix}_${idChars.toString("latin1", 0, TIME_CHARS + RANDOM_CHARS)}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`);
}

/** The millisecond (on the server's own clock) an id was made in: its first 8 characters after the prefix. */
export function idTimeMs(id: string): number {
  const at = id.indexOf("_") + 1;
  let ms = 0;
  for (const ch of id.slice(at, at + 8)) ms = ms * 62 + BASE62.indexOf(ch);
  return ms;
}

/**
 * The least id of `prefix` made at or after `ms` (server clock): ids sort by the time they were made, so
 * `id >= idFloor(p, ms)` selects what was made since `ms` whatever timestamps it carries (the sandbox's
 * are on its own clock, which a reset moves back: domain/sandbox-clock).
 */
export function idFloor(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${timeBase62(ms)}${"0".repeat(16)}`;
}
