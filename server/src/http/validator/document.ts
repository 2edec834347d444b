import { isRecord } from "../../guards.ts";
import type { OpenApiDocument } from "../contract.ts";

// The validator's copy of the contract (front.ts contractValidation): what express-openapi-validator
// reads to validate a request or a response, and nothing else, made in one pass over the document.
// Issue 36 ("start-up"): the validator walks its document whole several times as it starts (a deep copy,
// the `$ref` bundler's crawl, its schema preprocessor, and two more walks per Ajv instance, three of them
// once the first request arrives), and about half of the document is prose and examples: every
// `description`, `summary`, `example` and `examples` (the examples are most of the responses). None of
// them is read by the validator or by Ajv (they are annotations: Ajv runs with `strict: false` and keeps
// no annotation; the validator deletes the examples itself, after its first walks), so the copy leaves
// them out and every walk is about half as long. Whatever reads the prose or the examples (the served
// document, the error reference) reads the contract itself (contract.ts contractDocument).

/** Keywords that only annotate: no validation reads them. */
const ANNOTATIONS = new Set(["description", "summary", "example", "examples"]);

/**
 * Keywords whose value is a map of names (property names, path templates, status codes, media types,
 * schema and scheme names, scopes), or a list of objects: its keys are names, not keywords, so a property
 * called `description` is kept. `parameters` is a list in an operation and a map in `components`.
 */
const NAMED = new Set([
  "properties",
  "patternProperties",
  "dependentSchemas",
  "dependentRequired",
  "$defs",
  "definitions",
  "paths",
  "webhooks",
  "pathItems",
  "responses",
  "requestBodies",
  "content",
  "headers",
  "encoding",
  "links",
  "callbacks",
  "schemas",
  "parameters",
  "securitySchemes",
  "scopes",
  "mapping",
  "variables",
]);

/** Keywords whose value is data, copied as it is: enumerated and default values, security requirements. */
const DATA = new Set(["enum", "const", "default", "security"]);

/** A deep copy of JSON data, as it is. */
function copyData(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyData);
  if (!isRecord(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = copyData(value[key]);
  return copy;
}

/** A deep copy of a map of names (or a list): each value an object of keywords. */
function copyNamed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyKeywords);
  if (!isRecord(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = copyKeywords(value[key]);
  return copy;
}

/** A deep copy of an object of keywords (an OpenAPI object or a JSON schema), without its annotations. */
function copyKeywords(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyKeywords);
  if (!isRecord(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (ANNOTATIONS.has(key)) continue;
    const member = value[key];
    if (NAMED.has(key)) copy[key] = copyNamed(member);
    else if (DATA.has(key) || key.startsWith("x-")) copy[key] = copyData(member);
    else copy[key] = copyKeywords(member);
  }
  return copy;
}

/** The contract's named schemas that are a union with a `discriminator` (the `Event` union, by `type`). */
export function discriminatedSchemas(doc: Readonly<OpenApiDocument>): string[] {
  const schemas = doc.components.schemas;
  if (!isRecord(schemas)) return [];
  return Object.entries(schemas)
    .filter(([, schema]) => isRecord(schema) && schema.discriminator !== undefined)
    .map(([name]) => name);
}

/**
 * Takes the `discriminator`s out of the validator's copy of the document. express-openapi-validator's
 * preprocessor compiles, when the server starts, one Ajv validator per member of a union that has one
 * (the `Event` union: one per event type, each with its resource inside), which it uses only to
 * validate a request body of that union, and no operation takes one (front.test.ts checks). Issue 36:
 * that compilation was a fifth of start-up's CPU. Validation is unchanged: Ajv ignores the keyword (the
 * validator runs it with `strict: false` and without its `discriminator` option), `oneOf` decides.
 */
function withoutDiscriminators(doc: OpenApiDocument): void {
  const schemas = doc.components.schemas;
  if (!isRecord(schemas)) return;
  for (const name of discriminatedSchemas(doc)) {
    const schema = schemas[name];
    if (isRecord(schema)) delete schema.discriminator;
  }
}

/**
 * The validator's own copy of `doc`, which it may change: the annotations no validation reads left out
 * (above), and the `webhooks` too (requests this server sends, never receives); no `discriminator`
 * (withoutDiscriminators); one server, `/`, since the document's paths are absolute.
 */
export function validatorDocument(doc: Readonly<OpenApiDocument>): OpenApiDocument {
  const { webhooks: _sent, ...received } = doc;
  const copy = copyKeywords(received);
  if (!isRecord(copy) || !isRecord(copy.paths) || !isRecord(copy.components)) {
    throw new Error("the contract has no paths or components");
  }
  // cast: a copy of an OpenApiDocument, member for member, less annotations none of its typed members is.
  const validated = copy as unknown as OpenApiDocument;
  validated.servers = [{ url: "/" }];
  withoutDiscriminators(validated);
  return validated;
}
