import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AREAS, COLLECTIONS, ID_PREFIXES } from "./areas.ts";

// The one list of areas (./areas.ts) is the registry of collections, id prefixes and state machines:
// what the compiler cannot see of it is checked here. Two areas declaring one collection would be merged
// silently (the later one wins), a prefix made twice would make two kinds of record indistinguishable,
// and a machine an area does not declare would be missing from its declaration.

const DOMAIN = new URL(".", import.meta.url).pathname;
const OPENAPI = new URL("../../../generated/openapi/openapi.3.1.json", import.meta.url).pathname;

describe("the list of areas", () => {
  it("gives every collection to one area only", () => {
    const owners = new Map<string, string[]>();
    for (const area of AREAS) {
      for (const name of Object.keys(area.collections)) owners.set(name, [...(owners.get(name) ?? []), area.name]);
    }
    expect([...owners].filter(([, areas]) => areas.length > 1)).toEqual([]);
    expect(Object.keys(COLLECTIONS).sort()).toEqual([...owners.keys()].sort());
  });

  it("gives every id prefix to one area only, and each is one the contract's ids are made with", () => {
    expect(new Set(ID_PREFIXES).size).toBe(ID_PREFIXES.length);
    const contract = readFileSync(OPENAPI, "utf8");
    // The contract pins each id with a pattern such as "^mch_[0-9A-Za-z]{24}$" (spec/common/ids.tsp).
    const inContract = new Set([...contract.matchAll(/"\^([a-z]+)_\[0-9A-Za-z\]\{24\}\$"/g)].map((m) => m[1]));
    // Internal records the API never shows by id: vault audit entries and ledger entries.
    const internal = new Set(["aud", "le"]);
    expect(ID_PREFIXES.filter((p) => !internal.has(p) && !inContract.has(p))).toEqual([]);
  });

  it("names each area once, and lists every state machine an area's sources declare", () => {
    expect(new Set(AREAS.map((a) => a.name)).size).toBe(AREAS.length);
    for (const area of AREAS) {
      if (area.name === "kernel") continue;
      const folder = join(DOMAIN, area.name);
      const declared = readdirSync(folder)
        .filter((f) => f.endsWith(".ts") && !f.includes(".test"))
        .flatMap((f) => [...readFileSync(join(folder, f), "utf8").matchAll(/stateMachine<[^>]*>\("([^"]+)"/g)])
        .map((m) => m[1]);
      expect(area.machines.map((m) => m.name).sort(), area.name).toEqual(declared.sort());
    }
  });
});
