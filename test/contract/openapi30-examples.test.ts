/**
 * Every example in the OpenAPI 3.0 copy of the contract (the document dredd and other 3.0-only tools
 * read) validates against its schema in that copy, read with OpenAPI 3.0 semantics: request and
 * response examples, parameter examples and schema-level examples, webhooks (`x-webhooks`) included.
 * Redocly's `recommended` rules check the same (`npm run lint:redocly -w @payments/spec`); this is an
 * independent check with Ajv, so a conversion mistake in either cannot hide an invalid example.
 */
import { readFileSync } from "node:fs";
import Ajv, { type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { OPENAPI_30_PATH } from "./hooks.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const DOCUMENT_ID = "urn:payments:openapi.3.0.json";
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

const isObject = (node: Json | undefined): node is JsonObject =>
  typeof node === "object" && node !== null && !Array.isArray(node);

/**
 * OpenAPI 3.0's Schema Object as JSON Schema draft-07 (what Ajv's default class reads): `nullable: true`
 * adds "null" to the schema's `type` (OpenAPI 3.0.3; an `enum` must still list null to admit it).
 * Everything else this document uses means the same in both.
 */
function toJsonSchema(node: Json): Json {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    // An example's value is data, not a schema: copy it untouched.
    out[key] =
      key === "example" || key === "examples" || key === "enum" || key === "default" ? value : toJsonSchema(value);
  }
  if (out.nullable === true) {
    if (typeof out.type !== "string") throw new Error(`nullable without a type: ${JSON.stringify(node)}`);
    out.type = [out.type, "null"];
  }
  delete out.nullable;
  return out;
}

interface Example {
  /** Where the example is, as a JSON pointer into the document. */
  where: string;
  /** The pointer of the schema it must satisfy. */
  schema: string;
  value: Json;
}

/** A JSON pointer as a URI fragment (each segment escaped, then percent-encoded), as Ajv resolves `$ref`s. */
const pointer = (...parts: string[]) =>
  `#/${parts.map((p) => encodeURIComponent(p.replaceAll("~", "~0").replaceAll("/", "~1"))).join("/")}`;

/** Every example in the document with the schema it illustrates. */
function examplesOf(doc: JsonObject): Example[] {
  const found: Example[] = [];
  /** A Media Type or Parameter Object: its `example` and `examples` against its `schema`. */
  const media = (node: Json | undefined, at: string[]) => {
    if (!isObject(node) || node.schema === undefined) return;
    const schema = pointer(...at, "schema");
    if (node.example !== undefined) found.push({ where: pointer(...at, "example"), schema, value: node.example });
    if (isObject(node.examples)) {
      for (const [name, example] of Object.entries(node.examples)) {
        if (isObject(example) && example.value !== undefined) {
          found.push({ where: pointer(...at, "examples", name, "value"), schema, value: example.value });
        }
      }
    }
  };
  const operation = (op: Json | undefined, at: string[]) => {
    if (!isObject(op)) return;
    (Array.isArray(op.parameters) ? op.parameters : []).forEach((p, i) => {
      media(p, [...at, "parameters", String(i)]);
    });
    if (isObject(op.requestBody) && isObject(op.requestBody.content)) {
      for (const type of Object.keys(op.requestBody.content)) {
        media(op.requestBody.content[type], [...at, "requestBody", "content", type]);
      }
    }
    for (const [status, response] of Object.entries(isObject(op.responses) ? op.responses : {})) {
      if (!isObject(response) || !isObject(response.content)) continue;
      for (const type of Object.keys(response.content)) {
        media(response.content[type], [...at, "responses", status, "content", type]);
      }
    }
  };
  for (const section of ["paths", "x-webhooks"]) {
    const items = doc[section];
    if (!isObject(items)) continue;
    for (const [path, item] of Object.entries(items)) {
      if (!isObject(item)) continue;
      for (const method of METHODS) operation(item[method], [section, path, method]);
    }
  }
  const components = isObject(doc.components) ? doc.components : {};
  for (const [name, parameter] of Object.entries(isObject(components.parameters) ? components.parameters : {})) {
    media(parameter, ["components", "parameters", name]);
  }
  for (const [name, schema] of Object.entries(isObject(components.schemas) ? components.schemas : {})) {
    if (isObject(schema) && schema.example !== undefined) {
      found.push({
        where: pointer("components", "schemas", name, "example"),
        schema: pointer("components", "schemas", name),
        value: schema.example,
      });
    }
  }
  return found;
}

/** An Ajv that knows the converted document, so `#/components/...` references resolve inside it. */
function validatorsFor(doc: JsonObject): (schemaPointer: string) => ValidateFunction {
  const ajv = new Ajv({ allErrors: true, strict: true });
  addFormats(ajv);
  ajv.addFormat("int32", {
    type: "number",
    validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
  });
  ajv.addFormat("int64", { type: "number", validate: (n: number) => Number.isInteger(n) });
  // Annotations of OpenAPI and of this project (x-sensitive, x-extensible-enum, ...), and the
  // document's own top-level fields, which Ajv meets when the whole document is registered.
  const extensions = new Set<string>();
  const collect = (node: Json): void => {
    if (Array.isArray(node)) node.forEach(collect);
    else if (isObject(node)) {
      for (const [key, value] of Object.entries(node)) {
        if (key.startsWith("x-")) extensions.add(key);
        collect(value);
      }
    }
  };
  collect(doc);
  const annotations = new Set(["discriminator", "example", "xml", "externalDocs", ...extensions, ...Object.keys(doc)]);
  ajv.addVocabulary([...annotations].filter((key) => !ajv.getKeyword(key)));
  ajv.addSchema(toJsonSchema(doc) as object, DOCUMENT_ID);
  const cache = new Map<string, ValidateFunction>();
  return (schemaPointer) => {
    let validate = cache.get(schemaPointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `${DOCUMENT_ID}${schemaPointer}` });
      cache.set(schemaPointer, validate);
    }
    return validate;
  };
}

/** Every example that fails its schema, with Ajv's reasons. */
function invalidExamples(doc: JsonObject): string[] {
  const validator = validatorsFor(doc);
  const failures: string[] = [];
  for (const example of examplesOf(doc)) {
    const validate = validator(example.schema);
    if (!validate(example.value)) {
      const reasons = (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ");
      failures.push(`${example.where}: ${reasons}`);
    }
  }
  return failures;
}

const document = JSON.parse(readFileSync(OPENAPI_30_PATH, "utf8")) as JsonObject;

describe("the OpenAPI 3.0 copy's examples", () => {
  it("all validate against their 3.0 schemas", () => {
    const examples = examplesOf(document);
    // Every operation has examples; a walker that found none would pass vacuously.
    expect(examples.length).toBeGreaterThan(300);
    expect(invalidExamples(document)).toEqual([]);
  });

  it("include a documented null for a nullable reference, which the 3.0 schema admits", () => {
    // FraudEvaluation.merchant_id is a MerchantId or null (an evaluation of bare facts has no merchant).
    const nullMerchant = examplesOf(document).filter(
      (e) => isObject(e.value) && e.value.object === "fraud_evaluation" && e.value.merchant_id === null,
    );
    expect(nullMerchant.length).toBeGreaterThan(0);
  });

  it("would report an example its schema refuses", () => {
    const planted = structuredClone(document);
    const paths = planted.paths as JsonObject;
    const created = (((paths["/v1/fraud/evaluations"] as JsonObject).post as JsonObject).responses as JsonObject)[
      "201"
    ] as JsonObject;
    const media = (created.content as JsonObject)["application/json"] as JsonObject;
    const [name, example] = Object.entries(media.examples as JsonObject)[0] ?? [];
    expect(name).toBeDefined();
    ((example as JsonObject).value as JsonObject).merchant_id = 42;
    ((example as JsonObject).value as JsonObject).score = "high";
    const failures = invalidExamples(planted);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/examples\/[a-z_]+\/value: .*\/merchant_id .*\/score /);
  });
});
