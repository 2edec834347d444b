// The breaking-change gate catches each kind of break the /v1 promise rules out, and lets additive
// changes through. Each kind is planted in a copy of the real generated document.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { breakingChanges, CURRENT } from "./breaking.mjs";

const document = JSON.parse(readFileSync(CURRENT, "utf8"));
const copy = () => structuredClone(document);
const schemas = (doc) => doc.components.schemas;
/** The diffs the gate reports, as "<where>" strings. */
const reported = (after) => breakingChanges(document, after).map((c) => `${c.action} ${c.where}`);

describe("breaking-change gate", () => {
  it("passes the document against itself", () => {
    expect(reported(copy())).toEqual([]);
  });

  it("passes additive changes: a new operation, an optional request field, a response field, an enum value", () => {
    const after = copy();
    after.paths["/v1/widgets"] = structuredClone(after.paths["/v1/merchants"]);
    for (const op of Object.values(after.paths["/v1/widgets"])) op.operationId = `${op.operationId}Widget`;
    schemas(after).MerchantCreate.properties.nickname = { type: "string" };
    schemas(after).Merchant.properties.nickname = { type: "string" };
    schemas(after).ErrorCode.anyOf[0].enum.push("brand_new_code");
    expect(reported(after)).toEqual([]);
  });

  it("passes a new event type: a member of the discriminated Event union whose type value is extensible", () => {
    const after = copy();
    schemas(after).WidgetMadeEvent = structuredClone(schemas(after).MerchantCreatedEvent);
    schemas(after).WidgetMadeEvent.properties.type = { type: "string", enum: ["widget.made"] };
    schemas(after).Event.oneOf.push({ $ref: "#/components/schemas/WidgetMadeEvent" });
    schemas(after).Event.discriminator.mapping["widget.made"] = "#/components/schemas/WidgetMadeEvent";
    schemas(after).EventType.anyOf[0].enum.push("widget.made");
    expect(reported(after)).toEqual([]);
  });

  it("fails on a new member of a response union whose discriminator value is not extensible", () => {
    const after = copy();
    schemas(after).WidgetMadeEvent = structuredClone(schemas(after).MerchantCreatedEvent);
    schemas(after).Event.oneOf.push({ $ref: "#/components/schemas/WidgetMadeEvent" });
    schemas(after).Event.discriminator.mapping["widget.made"] = "#/components/schemas/WidgetMadeEvent";
    expect(reported(after).length).toBeGreaterThan(0);
  });

  it("fails on a removed operation", () => {
    const after = copy();
    delete after.paths["/v1/events/{id}"];
    expect(reported(after)).toContain("remove GET /v1/events/{id}");
  });

  it("fails on a removed or renamed response field", () => {
    const after = copy();
    const charge = schemas(after).Charge;
    charge.properties.failure_text = charge.properties.failure_message;
    delete charge.properties.failure_message;
    charge.required = charge.required.map((f) => (f === "failure_message" ? "failure_text" : f));
    expect(reported(after).some((d) => /^remove GET \/v1\/charges\/\{id\} .*failure_message/.test(d))).toBe(true);
  });

  it("fails on a removed response enum value", () => {
    const after = copy();
    schemas(after).ChargeStatus.anyOf[0].enum = schemas(after).ChargeStatus.anyOf[0].enum.filter((v) => v !== "voided");
    expect(reported(after).some((d) => /^remove GET \/v1\/charges\/\{id\} responses\.200.*status/.test(d))).toBe(true);
  });

  it("fails on a new required request field", () => {
    const after = copy();
    schemas(after).MerchantCreate.properties.country = { type: "string" };
    schemas(after).MerchantCreate.required = [...(schemas(after).MerchantCreate.required ?? []), "country"];
    expect(reported(after).some((d) => /^add POST \/v1\/merchants requestBody/.test(d))).toBe(true);
  });

  it("fails on a narrowed request type: a shorter maximum, a changed type, a removed enum value", () => {
    const after = copy();
    schemas(after).MerchantCreate.properties.name.maxLength = 10;
    const shorter = reported(after);
    expect(shorter.some((d) => /POST \/v1\/merchants requestBody.*name\.maxLength/.test(d))).toBe(true);

    const retyped = copy();
    schemas(retyped).RefundCreate.properties.amount = { type: "string" };
    expect(reported(retyped).some((d) => /POST \/v1\/charges\/\{id\}\/refunds requestBody.*amount/.test(d))).toBe(true);

    const fewer = copy();
    schemas(fewer).Scope.enum = schemas(fewer).Scope.enum.filter((s) => s !== "fraud");
    expect(reported(fewer).some((d) => /POST \/v1\/service_keys requestBody.*scopes/.test(d))).toBe(true);
  });
});
