// The `doc` column stored compactly (issue 36, bytes per charge): a document whose JSON is long enough
// is kept deflated (raw DEFLATE, RFC 1951) against a preset dictionary of what that collection's
// documents repeat — field names, enum values, the shape of an id or a timestamp — which is what makes
// a few hundred bytes of JSON compress at all (a captured charge's stored answer, 1,040 bytes of JSON,
// is ~210 deflated this way against ~600 without the dictionary). A shorter document stays JSON text:
// each deflate costs ~10 µs of CPU whatever its size (zlib's set-up per call), so it is spent where it
// saves most. Measured on a captured charge (test/bench/storage.ts, 2,000 charges): from 300 characters,
// 3 deflates and 1 inflate per charge (the stored answer, the charge, its fraud evaluation) take the
// store from 7,690 to 5,876 bytes per charge; from 200, 11 deflates and 9 inflates (events and intents
// too) reach 5,114 — a further 760 bytes for ~8 more deflates and inflates on the hot path.
//
// The column holds either form, so a store written before opens as it is and each row is deflated at
// its next write: TEXT is JSON, a BLOB is [format byte][deflated JSON]. The format byte names the
// dictionaries a row was deflated with, so these dictionaries are part of the file format: never edit
// one — add a new format with new dictionaries and keep reading the old.
//
// SQL that reads a field the document holds (a condition on a field without a column, query.ts; an
// upgrade at open, schema.ts) reads it through docJson(), the SQL function this module registers.

import { deflateRawSync, inflateRawSync } from "node:zlib";
import type Database from "better-sqlite3";

/**
 * JSON shorter than this (in UTF-16 units, about bytes) is kept as text (see above). Issue 36's target,
 * 3,000 bytes per charge, needs the per-charge rows of a hundred-odd characters deflated too (events,
 * postings, ledger entries, balance transactions, the request log: ~11 deflates per charge instead of 3,
 * measured in the commit that lowered it from 300); shorter ones gain too little for the call.
 */
export const DEFLATE_FROM = 100;

/** The format byte of a deflated document: dictionaries of format 1 (below), read only. */
const FORMAT_1 = 1;
/** Format 2: format 1's dictionaries and the short per-charge rows' (issue 36); what is written now. */
const FORMAT_2 = 2;

// A timestamp and ids as the documents hold them (kernel/ids.ts, kernel/time.ts), for the dictionaries.
const T = "2026-01-01T00:00:00.000000Z";
const CARD = `"payment_method":{"type":"card","token":"tok_","brand":"visa","last4":"4242","fingerprint":"fp_"}`;
const CHARGE = `{"id":"tx_","object":"charge","merchant_id":"mch_","amount":1000,"currency":"USD","status":"captured","amount_captured":1000,"amount_refunded":0,"fee":0,"net":1000,${CARD},"next_action":null,"failure_code":null,"failure_message":null,"description":null,"metadata":{},"customer":null,"fraud_evaluation_id":"fe_","review":null,"livemode":false,"created_at":"${T}","updated_at":"${T}"}`;

/**
 * Format 1's dictionaries, per collection (a collection without one has `common`): the fields and
 * values its documents repeat, the likeliest last (DEFLATE reaches back at most 32 KiB, and a nearer
 * match is a shorter code). Frozen: see above.
 */
const COMMON_1 = `"object":"livemode":false,"merchant_id":"mch_"status":"currency":"USD","amount":"metadata":{},"description":null,"created_at":"${T}","updated_at":"${T}",null,true,false}`;
const DICTIONARIES_1: Record<string, string> = {
  idempotency: `{"request_hash":"","state":"done","owner":"req_","locked_until":"${T}","status":201,"headers":{"content-type":"application/json; charset=utf-8"},"body":"${JSON.stringify(
    CHARGE,
  ).slice(1, -1)}","withheld":false,"object_id":null,"atomic":true}`,
  charges: `{"updated_at":"${T}","amount":1000,"currency":"USD","amount_captured":1000,"amount_refunded":0,${CARD},"next_action":null,"expires_at":null,"failure_code":null,"failure_message":null,"description":null,"metadata":{},"customer":null,"processor_ref":"sim_auth_","fraud_evaluation_id":"fe_","review":null,"review_expires_at":null,"fee_rate":{"percent_bps":0,"fixed":0}}`,
  events: `{"payload":{"id":"tx_","object":"charge","tx_id":"tx_","merchant_id":"mch_","amount":1000,"currency":"USD","status":"captured","payment_method_type":"card","amount_captured":1000,"amount_refunded":0},"delivery_pending":false}`,
  fraud_evaluations: `{"source":"charge","merchant_id":"mch_","amount":1000,"currency":"USD","score":0,"signals":["velocity_card"],"rules":[{"rule":"velocity_card","points":35,"reason":" charge attempts with this card in the last 10 minutes (more than 5)."}],"thresholds":{"review":65,"block":75,"request3ds":null}}`,
  acquirer_intents: `{"operation":"authorize","finish":"create","charge_id":"tx_","refund_id":null,"amount":1000,"currency":"USD","reference":null,"resolution":"committed","resolved_at":"${T}","token":"tok_","capture":true,"attempts":1}`,
  postings: `{"type":"capture","currency":"USD","merchant_id":"mch_","lines":[{"account":"acquirer:clearing","amount":-1000},{"account":"merchant:mch_:available","amount":1000}],"fee":0}`,
};

/**
 * Format 2's dictionaries: format 1's, and those of the per-charge rows too short to deflate before
 * DEFLATE_FROM came down to 100 (issue 36). Frozen like format 1's.
 */
const DICTIONARIES_2: Record<string, string> = {
  ...DICTIONARIES_1,
  ledger_entries: `{"account":"merchant:mch_:available","amount":1000,"type":"capture","available_on":null,"settled":null,"drawn":null}`,
  balance_transactions: `{"amount":1000,"fee":0,"net":1000,"status":"available","available_on":"${T}","cashout_id":null}`,
  request_log: `{"request_id":"req_","method":"POST","path":"/v1/charges","status":201,"latency_ms":1.5,"key_prefix":"key_test_","source":"api"}`,
};

const FORMATS = new Map([
  [FORMAT_1, DICTIONARIES_1],
  [FORMAT_2, DICTIONARIES_2],
]);
const dictionaries = new Map<string, Buffer>();
function dictionary(format: number, collection: string): Buffer {
  const key = `${format}:${collection}`;
  let found = dictionaries.get(key);
  if (found === undefined) {
    found = Buffer.from(FORMATS.get(format)?.[collection] ?? COMMON_1);
    dictionaries.set(key, found);
  }
  return found;
}

/**
 * Collections kept as text whatever their length: the vault's tokens are mostly sealed ciphertext, which
 * does not deflate, and keeping it as written lets the at-rest check (test/e2e/at-rest.test.ts) find the
 * sealed card data in the file before an erasure and prove it gone after.
 */
const KEPT_AS_TEXT = new Set(["tokens"]);

/**
 * The output buffer of each zlib call (issue 36, "footprint by default"). Node's sync calls set up a
 * stream per call, whose output buffer (`chunkSize`) is 16 KiB by default: a new ArrayBuffer per call
 * (Node's buffer pool serves only requests under 4 KiB), of which the result is a view, garbage that V8
 * frees only at its next collection. At ~20 calls per charge that was ~320 KiB of native memory per
 * charge between collections: measured in a loop of deflate + inflate of a 649-byte charge, the
 * ArrayBuffers peaked at 10.3 MB (Node 20) and 65 MB (Node 24, which collects them later) with 16 KiB,
 * at 2.2 and 14-20 MB with this size, from the pool. A document longer than it is joined from several
 * chunks (one more copy; a deflated document is a few hundred bytes). The bytes written do not change.
 */
const CHUNK_BYTES = 2048;

/** What the `doc` column holds for this JSON: the text itself, or deflated from `from` characters. */
export function pack(collection: string, json: string, from = DEFLATE_FROM): string | Buffer {
  if (json.length < from || KEPT_AS_TEXT.has(collection)) return json;
  const deflated = deflateRawSync(json, { dictionary: dictionary(FORMAT_2, collection), chunkSize: CHUNK_BYTES });
  const packed = Buffer.allocUnsafe(deflated.length + 1);
  packed[0] = FORMAT_2;
  deflated.copy(packed, 1);
  return packed;
}

/** The JSON text a `doc` column's value holds (pack's inverse; text is returned as it is). */
export function unpack(collection: string, value: unknown): string {
  if (typeof value === "string") return value;
  const format = value instanceof Uint8Array ? value[0] : undefined;
  if (!(value instanceof Uint8Array) || format === undefined || !FORMATS.has(format))
    throw new TypeError(`a row of ${collection} has a doc column in no format this version reads`);
  return inflateRawSync(value.subarray(1), {
    dictionary: dictionary(format, collection),
    chunkSize: CHUNK_BYTES,
  }).toString("utf8");
}

/** The SQL function registerDocJson defines: docJson('collection', doc) is the document's JSON text. */
export function docJson(collection: string): string {
  return `docJson('${collection}', doc)`;
}

/** Registers docJson on a connection (each connection that runs SQL over documents needs it). */
export function registerDocJson(db: Database.Database): void {
  db.function("docJson", { deterministic: true }, (collection: unknown, value: unknown) => {
    if (typeof collection !== "string") throw new TypeError("docJson needs the collection's name");
    return unpack(collection, value);
  });
}
