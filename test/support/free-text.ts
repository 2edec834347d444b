import { OPERATIONS } from "@payments/contract/operations";
import { loadContract } from "./openapi.ts";

// Card numbers in every free-text field of the contract (the operation table's `freeText`, from the
// contract's `x-free-text` marks): a request body for each field with a card number put there, written
// as the field's format requires (an e-mail address, a URL, plain text), so that the schema accepts it
// and only the free-text rule can refuse it. New free-text fields are covered by marking them in spec/.

export type Operation = (typeof OPERATIONS)[number];

/** The operations with free-text fields, each field once. */
export const FREE_TEXT_FIELDS: { op: Operation; field: string }[] = OPERATIONS.flatMap((op) =>
  op.freeText.map((field) => ({ op, field })),
);

/** Luhn-valid numbers of 13 to 19 digits, written the ways people write them. */
export const CARD_TEXTS = [
  "4242424242424242",
  "4242 4242 4242 4242",
  "5555-5555-5555-4444",
  "3782 822463 10005",
  "4000.0566.5566.5556",
  "4222222222222",
  "6759649826438453128",
] as const;

/** The digits of a card text. */
export const digitsOf = (text: string) => text.replace(/[^0-9]/g, "");

interface Schema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
}

const doc = loadContract().document as unknown as {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>;
  components: { schemas: Record<string, Schema> };
};

function resolve(schema: Schema | undefined): Schema | undefined {
  let at = schema;
  while (at?.$ref) at = doc.components.schemas[at.$ref.split("/").pop() ?? ""];
  return at;
}

/** The schema of one segment below `schema`, through references and alternatives. */
function child(schema: Schema | undefined, segment: string): Schema | undefined {
  const at = resolve(schema);
  if (!at) return undefined;
  for (const branch of [...(at.anyOf ?? []), ...(at.oneOf ?? [])]) {
    const found = child(branch, segment);
    if (found) return found;
  }
  if (segment === "*" && typeof at.additionalProperties === "object") return at.additionalProperties;
  if (segment === "[]") return at.items;
  return at.properties?.[segment];
}

/** The `format` of a free-text field's strings (`email`, `uri`), if it has one. */
function formatOf(op: Operation, field: string): string | undefined {
  let schema: Schema | undefined = doc.paths[op.path]?.[op.method]?.requestBody?.content["application/json"]?.schema;
  for (const segment of field.replace(/\[\]/g, ".[]").split(".")) {
    if (segment === "{key}") return undefined;
    schema = child(schema, segment);
  }
  const at = resolve(schema);
  return at?.format ?? [...(at?.anyOf ?? []), ...(at?.oneOf ?? [])].map((b) => resolve(b)?.format).find(Boolean);
}

/** A card text as a value of the field's format. */
export function valueFor(op: Operation, field: string, card: string): string {
  const format = formatOf(op, field);
  if (format === "email") return `${card.replace(/ /g, ".")}@example.com`;
  if (format === "uri" || field.endsWith("url")) return `https://shop.example/receipts/${card.replace(/ /g, "-")}`;
  return `Order #1042, ${card}`;
}

/**
 * Fields inside one variant of a union: the variant the body must use so that the field is allowed
 * (each variant allows exactly its own fields).
 */
const VARIANTS: Record<string, (body: Record<string, unknown>) => Record<string, unknown>> = {
  "createCharge payment_method.account_holder": (body) => ({
    ...body,
    currency: "EUR",
    payment_method: { type: "sepa_debit", iban: "DE89370400440532013000", account_holder: "Ada" },
  }),
  "payPaymentLink payment_method.account_holder": (body) => ({
    ...body,
    payment_method: { type: "sepa_debit", iban: "DE89370400440532013000", account_holder: "Ada" },
  }),
  "createPaymentLink after_completion.message": (body) => ({
    ...body,
    after_completion: { type: "message", message: "Thanks" },
  }),
  "createPaymentLink after_completion.url": (body) => ({
    ...body,
    after_completion: { type: "redirect", url: "https://shop.example/thanks" },
  }),
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** `body` with `value` put at the free-text `field` (a map's values and keys get one entry more). */
export function withTextAt(op: Operation, base: unknown, field: string, value: string): Record<string, unknown> {
  const variant = VARIANTS[`${op.operationId} ${field}`];
  const body = structuredClone(isRecord(base) ? base : {});
  const root = variant ? variant(body) : body;
  const segments = field.split(".");
  let at: Record<string, unknown> = root;
  for (const [i, segment] of segments.entries()) {
    const last = i === segments.length - 1;
    const next = segments[i + 1];
    if (next === "*" || next === "{key}") {
      const map = isRecord(at[segment]) ? (at[segment] as Record<string, unknown>) : {};
      // A metadata key holds at most 40 characters and no dot: the card number with spaces, no sentence.
      if (next === "*") map.note = value;
      else map[(value.match(/[0-9][0-9 .-]{11,}[0-9]/)?.[0] ?? value).replace(/\./g, " ")] = "x";
      at[segment] = map;
      return root;
    }
    if (segment.endsWith("[]")) {
      const name = segment.slice(0, -2);
      at[name] = [...(Array.isArray(at[name]) ? (at[name] as unknown[]) : []), value];
      return root;
    }
    if (last) {
      at[segment] = value;
      return root;
    }
    if (!isRecord(at[segment])) at[segment] = {};
    at = at[segment] as Record<string, unknown>;
  }
  return root;
}
