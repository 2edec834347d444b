// Benchmark second baseline: bare Express 5 plus express-openapi-validator bound to the same generated
// document with the payments server's validator options (server/src/http/app.ts: request validation
// with allErrors, formats, unknown query parameters refused, a security handler called for every
// operation), and two handlers that answer a fixed token without any work (no key lookup, no
// encryption, no store). What it reaches is the ceiling for any server built on Express and this
// validator on this machine; the payments rows can only come close to it, never pass it.
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { loadContract } from "@payments/server";
import express from "express";
import type * as Validator from "express-openapi-validator";
import { exitWithParent, profileOnRequest, type ReadyMessage } from "./protocol.ts";

// The validator the server depends on, resolved from the server package (the tests package does not
// depend on it itself), so both measure the same copy.
const fromServer = createRequire(import.meta.resolve("@payments/server"));
const OpenApiValidator = fromServer("express-openapi-validator") as typeof Validator;

/** A token as POST /v1/tokens answers it (the body is not validated here: response validation is off). */
const TOKEN = {
  id: "tok_4fQx9ZkT2mB7rLp1WcYd8sNa",
  object: "token",
  card: {
    brand: "visa",
    first4: "4242",
    last4: "4242",
    exp_month: 12,
    exp_year: 2030,
    fingerprint: "3f5e4a9c0b1d2e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f",
  },
  holder: "Bench Holder",
  created_at: "2026-01-01T00:00:00.000000Z",
  livemode: false,
};

const doc = loadContract();
doc.servers = [{ url: "/" }];

const app = express();
app.disable("x-powered-by");
app.set("etag", false);
app.set("query parser", "simple");
app.use(express.json({ type: ["application/json", "application/*+json"] }));
app.use(
  OpenApiValidator.middleware({
    // biome-ignore lint/suspicious/noExplicitAny: the validator's document type is stricter than our JSON view of it
    apiSpec: doc as any,
    validateApiSpec: false,
    validateRequests: { allErrors: true, allowUnknownQueryParameters: false },
    validateResponses: false,
    // Accepts any well-formed Bearer header: the validator still checks that one is present.
    validateSecurity: { handlers: { ServiceKeyAuth: async () => true } },
    validateFormats: true,
  }),
);
app.post("/v1/tokens", (_req, res) => {
  res.status(200).json(TOKEN);
});
app.get("/v1/tokens/:id", (req, res) => {
  res.status(200).json({ ...TOKEN, id: req.params.id });
});

const server = app.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  const ready: ReadyMessage = {
    type: "ready",
    url: `http://127.0.0.1:${port}`,
    key: `key_test_${"0".repeat(32)}`,
    tokenId: TOKEN.id,
  };
  process.send?.(ready);
});
profileOnRequest();
exitWithParent(
  () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
);
