// CHANGELOG.md lists, month by month, what changed in the /v1 document (spec/main.tsp, Versioning).
// This test holds it to that: every operation, webhook event type, enum value (error code, event type,
// status...) and field the document has gained since the released /v1 document (spec/released/v1.json)
// must be named, in backticks, in the newest month's section. A change to the document without its
// changelog line fails here.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { apiCompare } from "api-smart-diff";
import { describe, expect, it } from "vitest";
import { CURRENT, RELEASED } from "./breaking.mjs";

const read = (file) => JSON.parse(readFileSync(file, "utf8"));
const METHODS = new Set(["get", "put", "post", "delete", "patch"]);

/** What the document gained since the release, each as the words a changelog line must contain. */
export function additions(before, after) {
  const { diffs } = apiCompare(structuredClone(before), structuredClone(after));
  const found = new Map();
  for (const diff of diffs) {
    if (diff.action !== "add") continue;
    const path = diff.path ?? [];
    if (path[0] === "webhooks" && path.length <= 3) {
      found.set(`event ${path[1]}`, [`\`${path[1]}\``]);
    } else if (path[0] === "paths" && path.length === 2) {
      for (const method of Object.keys(diff.after ?? {}).filter((m) => METHODS.has(m))) {
        found.set(`operation ${method} ${path[1]}`, [`${method.toUpperCase()} ${path[1]}`]);
      }
    } else if (path[0] === "paths" && path.length === 3 && METHODS.has(path[2])) {
      found.set(`operation ${path[2]} ${path[1]}`, [`${String(path[2]).toUpperCase()} ${path[1]}`]);
    } else if (path[0] === "paths" && path.at(-2) === "enum" && typeof diff.after === "string") {
      found.set(`value ${diff.after}`, [`\`${diff.after}\``]);
    } else if (path[0] === "paths" && path.at(-2) === "properties" && typeof path.at(-1) === "string") {
      found.set(`field ${path.at(-1)}`, [`\`${path.at(-1)}\``]);
    }
  }
  return found;
}

/** The newest month's section of the changelog (`## YYYY-MM` up to the next `## `). */
export function newestSection(changelog) {
  const start = changelog.search(/^## \d{4}-\d{2}$/m);
  if (start < 0) return "";
  const next = changelog.slice(start + 3).search(/^## /m);
  return next < 0 ? changelog.slice(start) : changelog.slice(start, start + 3 + next);
}

describe("CHANGELOG.md", () => {
  it("names everything the document gained since the released /v1 document, in the newest month", () => {
    const section = newestSection(readFileSync(resolve(RELEASED, "../../../CHANGELOG.md"), "utf8"));
    expect(section, "CHANGELOG.md has a `## YYYY-MM` section").not.toBe("");
    const missing = [...additions(read(RELEASED), read(CURRENT))]
      .filter(([, words]) => !words.some((w) => section.includes(w)))
      .map(([what]) => what);
    expect(missing, "add these to the newest month of CHANGELOG.md").toEqual([]);
  });

  it("would catch an undocumented addition (a planted operation, field and error code)", () => {
    const released = read(RELEASED);
    const after = structuredClone(released);
    after.paths["/v1/widgets"] = { get: structuredClone(after.paths["/v1/merchants"].get) };
    after.paths["/v1/widgets"].get.operationId = "listWidgets";
    after.components.schemas.Merchant.properties.loyalty_tier = { type: "string" };
    after.components.schemas.ErrorCode.anyOf[0].enum.push("widget_jammed");
    const found = [...additions(released, after).keys()];
    expect(found).toEqual(
      expect.arrayContaining(["operation get /v1/widgets", "field loyalty_tier", "value widget_jammed"]),
    );
  });
});
