import document from "@payments/contract/openapi.3.1.json" with { type: "json" };
import { describe, expect, it } from "vitest";
import { parseOverride, TRIGGER_TYPES, TRIGGERS, TriggerError, trigger } from "./trigger.ts";

// Every event type the contract declares has a trigger (the mapped type of TRIGGERS makes a missing one a
// compile error; this test holds the same against the generated document itself, the contract's
// `webhooks` section and its EventType enum). What each trigger makes is tested against a real server in
// test/e2e/trigger.test.ts.

const declaredEnum = (): string[] => {
  const schema = document.components.schemas.EventType as { anyOf: { enum?: string[] }[] };
  return schema.anyOf.flatMap((a) => a.enum ?? []);
};

describe("TRIGGERS", () => {
  it("has a trigger for every webhook the contract declares, and no other", () => {
    expect(TRIGGER_TYPES).toEqual(Object.keys(document.webhooks).sort());
  });

  it("covers every value of the contract's EventType", () => {
    expect([...declaredEnum()].sort()).toEqual(TRIGGER_TYPES);
  });

  it("names, for each trigger, the bodies it sends, without repeats", () => {
    for (const type of TRIGGER_TYPES) {
      const { objects } = TRIGGERS[type];
      expect(new Set(objects).size, type).toBe(objects.length);
    }
  });
});

describe("parseOverride (--set)", () => {
  it("reads JSON values as JSON and anything else as text", () => {
    expect(parseOverride("amount=5000")).toEqual({ object: undefined, path: ["amount"], value: 5000 });
    expect(parseOverride("capture=false").value).toBe(false);
    expect(parseOverride('metadata.order="0042"')).toEqual({
      object: undefined,
      path: ["metadata", "order"],
      value: "0042",
    });
    expect(parseOverride("merchant:name=Summer sale = 20% off")).toEqual({
      object: "merchant",
      path: ["name"],
      value: "Summer sale = 20% off",
    });
    expect(parseOverride('payment_link:payment_methods=["card","pix"]').value).toEqual(["card", "pix"]);
  });

  it("refuses a malformed override or an object no trigger sends, naming it", () => {
    expect(() => parseOverride("amount")).toThrow(/\[object:\]field=value, not "amount"/);
    expect(() => parseOverride("=5")).toThrow(TriggerError);
    expect(() => parseOverride("metadata..x=1")).toThrow(/not a field path/);
    expect(() => parseOverride("customer:email=a@b.c")).toThrow(
      /"customer" in --set customer:email=a@b.c is not an object/,
    );
  });
});

describe("trigger() refuses before sending anything", () => {
  const refuse = () => {
    throw new Error("no request may be sent");
  };

  it("an event type the contract does not declare", async () => {
    await expect(
      trigger({ baseUrl: "http://127.0.0.1:9", apiKey: "key_test_x", type: "payment.teleported", fetch: refuse }),
    ).rejects.toThrow(/"payment.teleported" is not an event type of this API; the types are: cashout.canceled, /);
  });

  it("a production key: triggers run in the sandbox only", async () => {
    await expect(
      trigger({ baseUrl: "http://127.0.0.1:9", apiKey: "key_live_x", type: "merchant.created", fetch: refuse }),
    ).rejects.toThrow(/sandbox only/);
  });

  it("an override of a body the trigger does not send", async () => {
    await expect(
      trigger({
        baseUrl: "http://127.0.0.1:9",
        apiKey: "key_test_x",
        type: "merchant.created",
        overrides: [parseOverride("charge:amount=1")],
        fetch: refuse,
      }),
    ).rejects.toThrow(/The merchant.created trigger sends no charge body; it sends merchant/);
  });
});
