// What the validator's messages read of the contract (validation-hints.mjs, written to
// generated/types/validation-hints.ts) follows the contract: the committed file is what the committed
// document gives, every operation with a JSON body has its body's hint, and a change to a field in the
// document changes its hint (so a message can never quote a stale bound or pattern).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { validationHints, validationHintsModule } from "./validation-hints.mjs";

const generated = join(import.meta.dirname, "../../generated");
const text = readFileSync(join(generated, "openapi/openapi.3.1.json"), "utf8");
const doc = () => JSON.parse(text);
const METHODS = ["get", "put", "post", "delete", "patch"];

/** The hint of a body field (`amount`, or `payment_method.token` through the branch its `type` selects). */
function fieldHint({ hints, operations }, operation, path, type) {
  let hint = hints[operations[operation].body];
  for (const name of path.split(".")) {
    const chosen = hint.union?.byType.find((b) => b.type === type);
    if (chosen) hint = hints[chosen.hint];
    const property = hint.properties?.find(([known]) => known === name);
    if (!property) throw new Error(`${operation}: no field ${path}`);
    hint = hints[property[1]];
  }
  return hint;
}

describe("validation hints", () => {
  it("are committed as the committed document gives them", () => {
    const banner = doc().info["x-generated"];
    expect(readFileSync(join(generated, "types/validation-hints.ts"), "utf8")).toBe(
      validationHintsModule(doc(), banner),
    );
  });

  it("have an entry for every operation, with its JSON body's hint and each parameter's", () => {
    const document = doc();
    const { hints, operations } = validationHints(document);
    let bodies = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of METHODS.filter((m) => item[m])) {
        const entry = operations[`${method} ${path}`];
        expect(entry, `${method} ${path}`).toBeDefined();
        const takesJson = item[method].requestBody?.content?.["application/json"] !== undefined;
        expect(entry.body !== undefined, `${method} ${path} body`).toBe(takesJson);
        if (takesJson) {
          bodies++;
          expect(hints[entry.body], `${method} ${path} body`).toBeDefined();
        }
        expect(entry.parameters.length).toBe(item[method].parameters?.length ?? 0);
        for (const p of entry.parameters) expect(hints[p.hint], `${method} ${path} ${p.name}`).toBeDefined();
      }
    }
    expect(bodies).toBeGreaterThan(20);
    expect(hints.every((h) => h !== undefined)).toBe(true);
  });

  it("read what a message quotes: bounds, patterns in words, unions by type, where a token goes", () => {
    const hints = validationHints(doc());
    const charge = "post /v1/charges";
    expect(hints.operations[charge].tokenPath).toBe("payment_method.token");
    expect(fieldHint(hints, charge, "description").limits).toEqual({ maxLength: 1000 });
    expect(fieldHint(hints, charge, "amount").types).toEqual(["integer"]);
    const method = fieldHint(hints, charge, "payment_method");
    expect(method.union?.types).toContain("card");
    expect(method.union?.tokenBranch).toBe(true);
    const token = fieldHint(hints, charge, "payment_method.token", "card");
    expect(token.tokenId).toBe(true);
    expect(token.expected).toMatch(/tok_/);
  });

  it("change with the document: a field's bound, a new field", () => {
    const before = validationHints(doc());
    const edited = doc();
    const create = edited.components.schemas.ChargeCreate;
    create.properties.description.maxLength = 500;
    create.properties.reference = { type: "string", maxLength: 64 };
    const after = validationHints(edited);
    expect(fieldHint(after, "post /v1/charges", "description").limits).toEqual({ maxLength: 500 });
    expect(fieldHint(after, "post /v1/charges", "reference").limits).toEqual({ maxLength: 64 });
    expect(() => fieldHint(before, "post /v1/charges", "reference")).toThrow(/no field reference/);
    expect(after).not.toEqual(before);
  });
});
