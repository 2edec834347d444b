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
const RANDOM_SPACE = 62n ** BigInt(RANDOM_CHARS);

function fromBase62(text: string): bigint {
  let n = 0n;
  for (const ch of text) n = n * 62n + BigInt(BASE62.indexOf(ch));
  return n;
}

function toBase62(n: bigint, length: number): string {
  let out = "";
  for (let i = 0, rest = n; i < length; i++, rest /= 62n) out = BASE62[Number(rest % 62n)] + out;
  return out;
}

// The last id's time and random part in this process: ids made in the same millisecond must still sort in
// the order they were made, since the event stream reads that order from them (webhooks/events.ts across
// a sandbox clock reset). The next one in that millisecond adds a random step of up to 2^64 to the random
// part, so it stays as hard to guess from its neighbour as a fresh one.
let lastMs = 0;
let lastRandom = 0n;

export function newId(prefix: IdPrefix): string {
  const now = idNow();
  const step = fromBase62(randomBase62(11)) % 2n ** 64n;
  if (now !== lastMs || lastRandom + step + 1n >= RANDOM_SPACE) {
    lastMs = now;
    lastRandom = fromBase62(randomBase62(RANDOM_CHARS)) / 2n; // half the space: room to step within the ms
  } else {
    lastRandom += step + 1n;
  }
  return `${prefix}_${timeBase62(lastMs)}${toBase62(lastRandom, RANDOM_CHARS)}`;
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
