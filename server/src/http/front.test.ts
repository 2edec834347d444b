import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../logger.ts";
import { contractDocument } from "./contract.ts";
import { createStatelessFront, wellFormedKeys } from "./front.ts";
import { discriminatedSchemas } from "./validator/document.ts";

// The front without a store (the sandbox mock's, test/mock/mock.ts): what passes reaches `pass` with
// what the server's checks made of it, what does not gets the server's problem and never reaches
// `pass`. test/mock/errors.test.ts compares its answers with a real server's, mistake by mistake.

const KEY = `key_test_${"a".repeat(32)}`;
const passed: { method: string; url: string; body: unknown }[] = [];
let base = "";
let close = () => {};

beforeAll(async () => {
  const app = createStatelessFront({
    logger: createLogger("silent"),
    publicUrl: () => base,
    bodyLimitBytes: 1024,
    pass: (req, res) => {
      passed.push({ method: req.method, url: req.originalUrl, body: req.body });
      res.status(299).json({ passed: true });
    },
  });
  await new Promise<void>((resolve) => {
    const server = app.listen(0, "127.0.0.1", () => {
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve();
    });
    close = () => server.close();
  });
});
afterAll(() => close());

const call = (path: string, init: RequestInit & { key?: string | null } = {}) => {
  const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
  if (init.key !== null) headers.authorization = `Bearer ${init.key ?? KEY}`;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  return fetch(`${base}${path}`, { ...init, headers });
};

describe("the stateless front", () => {
  it("takes any well-formed key with every scope, of either environment", async () => {
    for (const key of [KEY, `key_live_${"Z".repeat(32)}`]) {
      expect((await call("/v1/service_keys", { key })).status).toBe(299);
    }
    const key = await wellFormedKeys.authenticate(`key_live_${"Z".repeat(32)}`);
    expect(key).toMatchObject({ livemode: true, scopes: ["*"], prefix: "key_live_ZZZZ" });
  });

  it("refuses a missing or malformed key with the server's 401, before anything else", async () => {
    for (const key of [null, "key_test_short", `${KEY}0`, `key_prod_${"a".repeat(32)}`]) {
      const res = await call("/v1/merchants?limt=5", { key });
      expect(res.status, String(key)).toBe(401);
      expect(await res.json()).toMatchObject({ code: "unauthorized", type: `${base}/docs/errors#unauthorized` });
    }
  });

  it("passes on what the server's checks made of the request: `{}` where no body is taken is none", async () => {
    passed.length = 0;
    expect((await call("/v1/charges/tx_9Lm2QwErTy7UiOp3AsDf5GhJ/void", { method: "POST", body: "{}" })).status).toBe(
      299,
    );
    expect(passed).toEqual([{ method: "POST", url: "/v1/charges/tx_9Lm2QwErTy7UiOp3AsDf5GhJ/void", body: undefined }]);
  });

  it("never passes on a request it refuses", async () => {
    passed.length = 0;
    const refused = [
      await call("/v1/charges?limt=5"),
      await call("/v1/charges/"),
      await call("/v1/merchants", { method: "POST", body: '{"name":' }),
      await call("/v1/merchants", { method: "POST", body: JSON.stringify({ name: "x".repeat(2000) }) }),
      await call("/v1/merchants", { method: "POST", body: JSON.stringify({ name: "4242 4242 4242 4242" }) }),
      await call("/v1/tokens", {
        method: "POST",
        body: JSON.stringify({ card: "4242424242424241", holder: "A", exp_month: 12, exp_year: 2034, cvc: "123" }),
      }),
      await call(
        "/v1/merchants?starting_after=mch_4fQx9ZkT2mB7rLp1WcYd8sNa&ending_before=mch_4fQx9ZkT2mB7rLp1WcYd8sNb",
      ),
    ];
    expect(refused.map((r) => r.status)).toEqual([400, 404, 400, 413, 400, 400, 400]);
    expect(await refused[5]?.json()).toMatchObject({ code: "invalid_card", param: "card" });
    expect(passed).toEqual([]);
  });
});

describe("the validator's copy of the contract", () => {
  // contractValidation takes the discriminators out of the validator's copy (start-up: the validator
  // compiles a validator per member of such a union, used only for request bodies). That is safe while
  // no request body is such a union; an operation that takes one must keep its discriminator.
  it("has no operation whose request body is a union with a discriminator", () => {
    const doc = contractDocument();
    const unions = discriminatedSchemas(doc).map((name) => `#/components/schemas/${name}`);
    expect(unions).toContain("#/components/schemas/Event");
    const bodies = JSON.stringify(
      Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.requestBody ?? null)),
    );
    for (const ref of unions) expect(bodies).not.toContain(`"${ref}"`);
  });
});
