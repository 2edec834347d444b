import { OPERATIONS } from "@payments/contract/operations";
import { beforeAll, describe, expect, it } from "vitest";
import { loadContract } from "../support/openapi.ts";
import { RECIPES } from "../support/recipes.ts";
import { clientFor, createMerchant, insertEvent, useServer } from "./fixtures.ts";

// A list's cursor names an object of that list in the caller's environment (ListParameters in
// spec/common/pagination.tsp). One that names nothing there — garbage, a well-formed id of nothing,
// another resource's id, an object of the other environment — is a 400 naming the parameter, never an
// empty page that reads as the end of the list. Every list operation of the document is covered.

const contract = loadContract();

/** The list operations: those whose parameters include the cursors. */
const LISTS = OPERATIONS.filter((op) => {
  const parameters = (
    contract.document.paths[op.path]?.[op.method] as { parameters?: { $ref?: string; name?: string }[] }
  )?.parameters;
  return (parameters ?? []).some((p) => (p.name ?? p.$ref ?? "").toLowerCase().includes("starting"));
});

describe("a cursor that names nothing in the list is a 400 naming it", () => {
  const { server, client } = useServer();
  let merchantId: string;
  let eventId: string;
  let liveMerchantId: string;

  beforeAll(async () => {
    merchantId = (await createMerchant(client)).id;
    eventId = (await insertEvent(server)).id;
    liveMerchantId = (await createMerchant(clientFor(server, await server.key(["*"], { live: true })))).id;
  });

  it("finds the list operations in the document", () => {
    expect(LISTS.map((op) => op.operationId)).toEqual(expect.arrayContaining(["listCharges", "listMerchants"]));
    expect(LISTS.length).toBeGreaterThan(10);
  });

  for (const op of LISTS) {
    it(`${op.operationId} (GET ${op.path})`, async () => {
      const { path } = await RECIPES[op.operationId]({ server, client, live: false });
      const base = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(path[name] ?? ""));
      const strangers = {
        garbage: "garbage",
        "a well-formed id of nothing": "tx_A1b2C3d4E5f6G7h8I9j0K1l2",
        "another resource's id": op.operationId === "listMerchants" ? eventId : merchantId,
        "an object of the other environment": liveMerchantId,
      };
      for (const param of ["starting_after", "ending_before"]) {
        for (const [what, id] of Object.entries(strangers)) {
          const url = `${server.url}${base}?${param}=${encodeURIComponent(id)}`;
          const response = await fetch(url, { headers: { Authorization: `Bearer ${server.sandboxKey}` } });
          const check = await contract.checkFetchResponse("get", op.path, response);
          const body = (await response.json()) as { param?: string; detail?: string; errors?: { param: string }[] };
          expect({ status: response.status, param: body.param }, `${param}=${what}: ${body.detail}`).toEqual({
            status: 400,
            param,
          });
          expect(body.detail).toContain(id);
          expect(check.errors).toEqual([]);
        }
      }
    });
  }

  it("a cursor the list returned still pages (the control)", async () => {
    const first = await client.GET("/v1/merchants", { params: { query: { limit: 1 } } });
    const cursor = first.data?.data[0]?.id ?? "";
    const next = await client.GET("/v1/merchants", { params: { query: { limit: 1, starting_after: cursor } } });
    expect(next.response.status).toBe(200);
  });
});
