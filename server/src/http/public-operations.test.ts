import { OPERATIONS } from "@payments/contract/operations";
import type { NextFunction, Request, Response } from "express";
import { describe, expect, it } from "vitest";
import { DomainError } from "../domain/kernel/errors.ts";
import { payPath, sameOriginOnly } from "./public-operations.ts";

describe("payPath", () => {
  it("is the contract's payPaymentLink path, built and recognized", () => {
    const template = OPERATIONS.find((o) => o.operationId === "payPaymentLink")?.path;
    expect(payPath.of("plink_abc")).toBe(template?.replace("{id}", "plink_abc"));
    expect(payPath.linkOf(payPath.of("plink_9Lm2QwErTy7UiOp3AsDf5GhJ"))).toBe("plink_9Lm2QwErTy7UiOp3AsDf5GhJ");
    expect(payPath.of("a/b c")).not.toContain("a/b");
  });

  it("recognizes no other path", () => {
    for (const path of ["/v1/payment_links/plink_abc", "/v1/payment_links/a/b/pay", `${payPath.of("x")}/more`, "/"]) {
      expect(payPath.linkOf(path), path).toBeNull();
    }
  });
});

describe("the public pay operation's cross-site guard", () => {
  const guard = sameOriginOnly(() => "https://pay.example.com");
  function run(headers: Record<string, string>): unknown {
    const req = { get: (name: string) => headers[name.toLowerCase()] } as unknown as Request;
    let passed: unknown = "not called";
    guard(
      req,
      {} as Response,
      ((err?: unknown) => {
        passed = err ?? null;
      }) as NextFunction,
    );
    return passed;
  }

  it("lets the server's own page through, and requests that come from no browser", () => {
    expect(run({ origin: "https://pay.example.com", "sec-fetch-site": "same-origin" })).toBeNull();
    expect(run({})).toBeNull();
  });

  it("refuses another origin, or a browser saying the request is cross-site or same-site", () => {
    const cases: Record<string, string>[] = [
      { origin: "https://evil.example" },
      { origin: "http://pay.example.com" },
      { origin: "https://pay.example.com:8443" },
      { origin: "null" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "none" },
      { origin: "https://pay.example.com", "sec-fetch-site": "cross-site" },
    ];
    for (const headers of cases) {
      const result = run(headers);
      expect(result, JSON.stringify(headers)).toBeInstanceOf(DomainError);
      expect(result).toMatchObject({ code: "forbidden" });
    }
  });
});
