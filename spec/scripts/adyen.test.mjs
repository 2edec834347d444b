// Adyen's trimmed documents (server/src/adapters/adyen/contract/, written by adyen.mjs) hold together
// without Adyen's full documents, which CI does not have: trimming a committed document again changes
// nothing (it keeps exactly the connector's operations and every component they reach, and no other),
// and the committed types are what openapi-typescript makes of it, so a hand edit to either fails here.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DOCUMENTS, outDir, serialize, trim, typesOf } from "./adyen.mjs";

describe("Adyen's trimmed documents", () => {
  for (const spec of DOCUMENTS) {
    it(`${spec.out}.json is closed, exactly trimmed, and typed as committed`, async () => {
      const text = readFileSync(join(outDir, `${spec.out}.json`), "utf8");
      const committed = JSON.parse(text);
      const again = trim(committed, spec, `${spec.out}.json`);
      expect(serialize(again)).toBe(text);
      expect(await typesOf(committed, spec.out)).toBe(readFileSync(join(outDir, `${spec.out}.ts`), "utf8"));
    });
  }

  it("carries Adyen's licence and the source commit", () => {
    expect(readFileSync(join(outDir, "LICENSE"), "utf8")).toMatch(/MIT License[\s\S]*Adyen/);
    expect(readFileSync(join(outDir, "SOURCE.md"), "utf8")).toMatch(/commit `[0-9a-f]{40}`/);
    expect(existsSync(join(outDir, "checkout.ts"))).toBe(true);
  });
});
