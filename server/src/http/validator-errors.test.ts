import { OPERATIONS } from "@payments/contract/operations";
import { describe, expect, it } from "vitest";
import { loadContract } from "./contract.ts";
import {
  explainFindings,
  type FieldError,
  findingsDetail,
  nearestName,
  type RequestParts,
  type ValidatorFinding,
} from "./validator-errors.ts";

// The translation of validator findings into errors[] (docs/api.md "Errors"). What a person reads for
// real requests is asserted end to end, mistake by mistake, in test/e2e/mistakes.test.ts; here: the
// nearest-name rule, and that the contract's own schema-violation examples (the first 400 example of
// every operation, which the mock serves and the reference shows; spec/scripts/generate.mjs) are worded
// exactly as this layer words the same mistake.

const doc = loadContract();

function parts(op: (typeof OPERATIONS)[number], patch: Partial<RequestParts> = {}): RequestParts {
  return { method: op.method, route: op.path, body: {}, query: {}, params: {}, headers: {}, ...patch };
}

describe("nearestName", () => {
  it("finds a typo within a third of the name's length, and the same name spelt with other separators or case", () => {
    expect(nearestName("nme", ["name", "status", "metadata"])).toBe("name");
    expect(nearestName("merchantId", ["merchant_id", "amount"])).toBe("merchant_id");
    expect(nearestName("curency", ["currency", "amount"])).toBe("currency");
    expect(nearestName("colour", ["name", "status"])).toBeUndefined();
  });
});

describe("a whole number out of range", () => {
  it("names the field's own range, not its format's (a clock advance's `seconds: 1e12`)", () => {
    const op = OPERATIONS.find((o) => o.operationId === "advanceSandboxClock");
    if (!op) throw new Error("no advanceSandboxClock operation");
    const issues = explainFindings(parts(op, { body: { seconds: 1e12 } }), [
      { path: "/body/seconds", errorCode: "format.openapi.validation", message: 'must match format "int32"' },
      { path: "/body/seconds", errorCode: "maximum.openapi.validation", message: "must be <= 31622400" },
    ]);
    expect(issues).toEqual([{ param: "seconds", code: "too_large", message: "must be at most 31622400" }]);
  });
});

describe("the contract's schema-violation examples", () => {
  type Example = { detail: string; errors: FieldError[] };
  type Responses = Record<string, { content?: Record<string, { examples?: Record<string, { value: Example }> }> }>;
  const examples = OPERATIONS.map((op) => {
    const responses = doc.paths[op.path]?.[op.method]?.responses as Responses | undefined;
    const media = responses?.["400"]?.content?.["application/problem+json"];
    return { op, example: Object.values(media?.examples ?? {})[0]?.value };
  }).filter((e) => e.example !== undefined);

  it("exist for every operation that can answer 400", () => {
    expect(examples.length).toBeGreaterThan(50);
  });

  for (const { op, example } of examples) {
    it(`${op.operationId}: ${example?.detail}`, () => {
      const [expected] = example?.errors ?? [];
      if (!expected) throw new Error("the example has no errors[]");
      const { param, code } = expected;
      // The same mistake, as the validator reports it.
      let request: RequestParts;
      let finding: ValidatorFinding;
      if (code === "missing") {
        request = parts(op, { body: {} });
        finding = { path: `/body/${param}`, errorCode: "required.openapi.validation" };
      } else if (code === "invalid_type" && param === "body") {
        request = parts(op, { body: [] });
        finding = { path: "/body", errorCode: "type.openapi.validation" };
      } else if (code === "invalid_type") {
        const wrong = /string/.test(expected.message) ? 5 : "x";
        request = parts(op, { body: { [param]: wrong } });
        finding = { path: `/body/${param}`, errorCode: "type.openapi.validation" };
      } else if (code === "invalid_format") {
        request = parts(op, { params: { [param]: "abc" } });
        finding = { path: `/params/${param}`, errorCode: "pattern.openapi.validation" };
      } else if (code === "too_small") {
        request = parts(op, { query: { [param]: 0 } });
        finding = { path: `/query/${param}`, errorCode: "minimum.openapi.validation" };
      } else if (code === "unknown_field") {
        request = parts(op, { query: { [param]: "1" } });
        finding = { path: `/query/${param}`, message: `Unknown query parameter '${param}'` };
      } else {
        throw new Error(`no way to make a ${code} mistake here: extend this test`);
      }
      const issues = explainFindings(request, [finding]);
      expect(issues).toEqual(example?.errors);
      expect(findingsDetail(issues)).toBe(example?.detail);
    });
  }
});
