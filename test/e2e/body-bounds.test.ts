import { describe, expect, it } from "vitest";
import { TestClock } from "../support/clock.ts";
import { cardPayment, createPaymentLink, json, pageTokenOf, useServer, withServer } from "./fixtures.ts";

// A refusal costs what reading the request costs (docs/api.md "Conventions"): the shape of a JSON
// body is bounded before it is parsed (server/src/http/body-bounds.ts), a 400 lists at most 50
// findings, and every rate limit counts a request before its body is read. A 100 KB body of 8,000
// unknown fields once took seconds of CPU to refuse, and the keyless pay operation let anyone send it.
// These tests assert on the answers, never on time; the benchmark's `worst-body` row measures the CPU.

/** `{ name, f0: 0, f1: 1, … }`: a body of `n` fields the operation does not take. */
const unknownFields = (n: number) => ({
  name: "Acme",
  ...Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, i])),
});

describe("bodies of any shape, refused in bounded work", () => {
  const { server } = useServer();
  const post = (path: string, body: string) =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.sandboxKey}`, "content-type": "application/json" },
      body,
    });

  it("refuses 8,000 unknown fields with one finding naming the bound, in a small answer", async () => {
    const body = JSON.stringify(unknownFields(8000));
    expect(body.length).toBeGreaterThan(60_000);
    expect(body.length).toBeLessThan(100 * 1024);
    const res = await post("/v1/merchants", body);
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text.length).toBeLessThan(1000);
    const problem = JSON.parse(text);
    expect(problem).toMatchObject({ code: "invalid_request", param: "body" });
    expect(problem.detail).toContain("at most 100 entries");
    expect(problem.errors).toEqual([
      { param: "body", code: "too_long", message: "must have at most 100 fields (no operation takes more)" },
    ]);
  });

  it("names the object or array that breaks the bound", async () => {
    const metadata = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, "v"]));
    const res = await post("/v1/merchants", JSON.stringify({ name: "Acme", metadata }));
    expect(await json(res)).toMatchObject({ status: 400, param: "metadata", errors: [{ code: "too_long" }] });
    const events = Array.from({ length: 5000 }, () => "payment.captured");
    const hooks = await post(
      "/v1/webhook_endpoints",
      JSON.stringify({ url: "https://example.com/h", enabled_events: events }),
    );
    expect(await json(hooks)).toMatchObject({ status: 400, param: "enabled_events" });
  });

  it("refuses deep nesting before parsing it", async () => {
    const res = await post("/v1/merchants", "[".repeat(50_000) + "]".repeat(50_000));
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({
      errors: [{ param: "body", code: "invalid_value", message: "must not nest objects and arrays more than 16 deep" }],
    });
  });

  it("lists at most 50 findings, and says there are more", async () => {
    const res = await post("/v1/merchants", JSON.stringify(unknownFields(99)));
    const problem = await json(res);
    expect(res.status).toBe(400);
    expect(problem.errors).toHaveLength(50);
    expect(problem.errors[0]).toMatchObject({ param: "f0", code: "unknown_field" });
    expect(problem.detail).toMatch(/These are the first 50 problems found; fix them and send the request again/);
  });

  it("repeats at most 60 characters of a long unknown name", async () => {
    const name = "n".repeat(90_000);
    const res = await post("/v1/merchants", JSON.stringify({ name: "Acme", [name]: 1 }));
    const problem = await json(res);
    expect(problem.errors[0]).toMatchObject({ code: "unknown_field" });
    expect(problem.errors[0].message).toBe(
      `unknown field \`${"n".repeat(60)}…\`; this request takes \`name\`, \`status\` and \`metadata\``,
    );
  });
});

describe("the keyless pay operation's limits, counted before its body is read", () => {
  it("refuses the worst body from one address past its per-address limit with 429", async () => {
    await withServer(
      { RATE_LIMIT_PAYMENT_ADDRESS_PER_MINUTE: "2" },
      async ({ server, client }) => {
        const link = await createPaymentLink(client);
        const worst = JSON.stringify({
          page_token: await pageTokenOf(server, link.id),
          payment_method: cardPayment(),
          ...unknownFields(8000),
        });
        const pay = () =>
          fetch(`${server.url}/v1/payment_links/${link.id}/pay`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: worst,
          });
        const answers = [await pay(), await pay(), await pay()];
        expect(answers.map((r) => r.status)).toEqual([400, 400, 429]);
        expect(await json(answers[0] as Response)).toMatchObject({ errors: [{ param: "body", code: "too_long" }] });
        expect(await json(answers[2] as Response)).toMatchObject({ code: "rate_limited" });
      },
      { clock: TestClock.atNextMinute() },
    );
  });
});
