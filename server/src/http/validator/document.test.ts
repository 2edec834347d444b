import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { isRecord } from "../../guards.ts";
import { contractDocument, loadContract } from "../contract.ts";
import { validatorDocument } from "./document.ts";

// The validator's copy of the contract leaves out prose and examples (issue 36, start-up). What
// validation reads must all be there: every name (property, path, parameter, status, media type,
// schema) and every keyword that constrains a value. The validator's answers themselves are checked by
// validator-errors.test.ts, front.test.ts and the e2e and contract suites, which run on this copy.

const contract = contractDocument();
const copy = validatorDocument(contract);

const record = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {});

/** Every `$ref`, `required` list and constraining keyword of a JSON value, with where it is. */
function constraints(value: unknown, at = "", out: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) constraints(item, `${at}/${i}`, out);
  } else if (isRecord(value)) {
    for (const [key, member] of Object.entries(value)) {
      const here = `${at}/${key}`;
      // A property may be named like a keyword (Problem's `type`): its value is then a schema, walked below.
      const keyword = ["$ref", "type", "format", "pattern", "enum", "const", "required", "minimum", "maximum"];
      if (keyword.includes(key) && !isRecord(member)) {
        out.push(`${here}=${JSON.stringify(member)}`);
      }
      if (!["example", "examples"].includes(key)) constraints(member, here, out);
    }
  }
  return out;
}

describe("the validator's copy of the contract", () => {
  it("keeps every schema with every property, those named like prose included", () => {
    const schemas = record(contract.components.schemas);
    const copied = record(copy.components.schemas);
    expect(Object.keys(copied)).toEqual(Object.keys(schemas));
    for (const [name, schema] of Object.entries(schemas)) {
      expect(Object.keys(record(record(copied[name]).properties)), name).toEqual(
        Object.keys(record(record(schema).properties)),
      );
    }
    // A request body's `description` is a field like any other (ChargeCreate: spec/resources/charges.tsp).
    expect(record(record(copied.ChargeCreate).properties).description).toBeDefined();
  });

  it("keeps every path, operation, parameter, request body and response status", () => {
    expect(Object.keys(copy.paths)).toEqual(Object.keys(contract.paths));
    for (const [path, item] of Object.entries(contract.paths)) {
      const copiedItem = record(copy.paths[path]);
      expect(Object.keys(copiedItem), path).toEqual(
        Object.keys(item).filter((k) => !["summary", "description"].includes(k)),
      );
      for (const [method, op] of Object.entries(item)) {
        if (!isRecord(op)) continue;
        const copiedOp = record(copiedItem[method]);
        expect(JSON.stringify(copiedOp.parameters ?? []).length, `${method} ${path}`).toBeLessThanOrEqual(
          JSON.stringify(op.parameters ?? []).length,
        );
        expect(Object.keys(record(copiedOp.responses))).toEqual(Object.keys(record(op.responses)));
        expect(Object.keys(record(record(copiedOp.requestBody).content))).toEqual(
          Object.keys(record(record(op.requestBody).content)),
        );
        expect(copiedOp.security).toEqual(op.security);
        expect(copiedOp["x-scopes"]).toEqual(op["x-scopes"]);
      }
    }
  });

  it("keeps every constraint, and leaves out the prose and examples", () => {
    const { webhooks: _sent, ...received } = loadContract();
    // The discriminators are taken out on purpose (document.ts withoutDiscriminators), `servers` is `/`.
    expect(constraints(copy)).toEqual(constraints({ ...received, servers: [{ url: "/" }] }));
    const size = (doc: unknown) => JSON.stringify(doc).length;
    expect(size(copy)).toBeLessThan(size(contract) * 0.6);
    expect(JSON.stringify(copy)).not.toContain('"example"');
    expect(copy.webhooks).toBeUndefined();
  });

  it("is the validator's own: changing it leaves the contract as it was", () => {
    const before = JSON.stringify(contract);
    const mine = validatorDocument(contract);
    record(record(mine.components.schemas).ChargeCreate).properties = {};
    mine.paths = {};
    expect(JSON.stringify(contract)).toBe(before);
  });
});

describe("the validator's copy as the patched validator takes it", () => {
  // patches/express-openapi-validator+5.6.2.patch: a document whose $refs all point inside it is not
  // bundled. That is only right while bundling would change nothing in it, as here.
  it("is what the $ref bundler would have made of it", async () => {
    const fromValidator = createRequire(createRequire(import.meta.url).resolve("express-openapi-validator"));
    const bundler = fromValidator("@apidevtools/json-schema-ref-parser") as {
      bundle: (doc: object) => Promise<object>;
    };
    const mine = validatorDocument(contract);
    expect(await bundler.bundle(validatorDocument(contract))).toEqual(mine);
  });
});
