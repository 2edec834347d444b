import { describe, expect, it } from "vitest";
import { loadContract } from "./contract.ts";
import { documentedBaseUrl, rebaseExamples } from "./served-document.mjs";

// The contract as served (GET /docs/openapi.json here, the Prism mock's copy in test/mock/document.mjs):
// its examples' links point at the address that serves it.

/** Every string in the examples of a document, with where it is. */
function exampleStrings(node: unknown, inExample = false, out: string[] = []): string[] {
  if (typeof node === "string") {
    if (inExample) out.push(node);
  } else if (Array.isArray(node)) {
    for (const item of node) exampleStrings(item, inExample, out);
  } else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      exampleStrings(value, inExample || key === "example" || key === "examples", out);
    }
  }
  return out;
}

describe("rebaseExamples", () => {
  const contract = loadContract();
  const documented = documentedBaseUrl(contract);

  it("moves every example link (problem types, payment link pages) to the serving address, and nothing else", () => {
    const served = rebaseExamples(contract, "https://pay.example.com:8443/");
    const before = exampleStrings(contract).filter((s) => s.startsWith(`${documented}/`));
    const after = exampleStrings(served);
    expect(before.some((s) => s.includes("/docs/errors#"))).toBe(true);
    expect(before.some((s) => s.includes("/pay/plink_"))).toBe(true);
    expect(after.filter((s) => s.startsWith(`${documented}/`))).toEqual([]);
    for (const link of before) {
      expect(after).toContain(`https://pay.example.com:8443/${link.slice(documented.length + 1)}`);
    }
    // Outside the examples the document is untouched (its servers entry keeps its template).
    expect(served.servers).toEqual(contract.servers);
    expect(served.paths["/v1/merchants"]?.post?.operationId).toBe("createMerchant");
    // The contract given is not changed.
    expect(exampleStrings(contract).filter((s) => s.startsWith(`${documented}/`))).toEqual(before);
  });
});
