import type { NextFunction, Request, Response } from "express";
import { describe, expect, it } from "vitest";
import { createSimulatorProcessor } from "../adapters/processor-simulator.ts";
import { simulatingAcquirerError, withSimulatedAcquirerErrors } from "../adapters/simulated-acquirer.ts";
import { DomainError } from "../domain/kernel/errors.ts";
import { parseSimulate, sandboxSimulate } from "./sandbox-simulate.ts";

// The Sandbox-Simulate header (spec/common/sandbox-simulate.tsp); the e2e suite
// (test/e2e/sandbox-simulate.test.ts) runs each mode through the server.

function call(step: ReturnType<typeof sandboxSimulate>, header: string | undefined, livemode: boolean) {
  const req = { get: (name: string) => (name === "Sandbox-Simulate" ? header : undefined) } as unknown as Request;
  const res = { locals: { caller: { livemode } } } as unknown as Response;
  return new Promise<unknown>((resolve) => {
    void step(req, res, ((err?: unknown) => resolve(err ?? "next")) as NextFunction);
  });
}

describe("parseSimulate", () => {
  it("reads the contract's values, and nothing else", () => {
    expect(parseSimulate("timeout_after_commit")).toEqual({ mode: "timeout_after_commit" });
    expect(parseSimulate("acquirer_error")).toEqual({ mode: "acquirer_error" });
    expect(parseSimulate("rate_limited")).toEqual({ mode: "rate_limited" });
    expect(parseSimulate("latency=1")).toEqual({ mode: "latency", ms: 1 });
    expect(parseSimulate("latency=9999")).toEqual({ mode: "latency", ms: 9999 });
    for (const bad of ["", "latency=0", "latency=10000", "latency=01", "latency=", "timeout", "RATE_LIMITED"]) {
      expect(parseSimulate(bad), bad).toBeNull();
    }
  });
});

describe("sandboxSimulate", () => {
  it("waits latency=<ms> with the injected sleep, then runs the request", async () => {
    const waited: number[] = [];
    const step = sandboxSimulate({ operationId: "createMerchant" }, { sleep: async (ms) => void waited.push(ms) });
    expect(await call(step, "latency=250", false)).toBe("next");
    expect(waited).toEqual([250]);
  });

  it("refuses every value with a production key, naming the header, and waits for nothing", async () => {
    const waited: number[] = [];
    const step = sandboxSimulate({ operationId: "createCharge" }, { sleep: async (ms) => void waited.push(ms) });
    for (const value of ["timeout_after_commit", "acquirer_error", "rate_limited", "latency=250"]) {
      const err = await call(step, value, true);
      expect(err, value).toBeInstanceOf(DomainError);
      expect(err).toMatchObject({ code: "invalid_request", param: "Sandbox-Simulate" });
    }
    expect(waited).toEqual([]);
  });

  it("lets a request without the header through, in either environment", async () => {
    const step = sandboxSimulate({ operationId: "createMerchant" });
    expect(await call(step, undefined, true)).toBe("next");
    expect(await call(step, undefined, false)).toBe("next");
  });

  it("refuses acquirer_error where no card reaches the acquirer", async () => {
    expect(await call(sandboxSimulate({ operationId: "createMerchant" }), "acquirer_error", false)).toMatchObject({
      code: "invalid_request",
      param: "Sandbox-Simulate",
    });
    expect(await call(sandboxSimulate({ operationId: "createCharge" }), "acquirer_error", false)).toBe("next");
  });
});

describe("withSimulatedAcquirerErrors", () => {
  const authorization = (livemode: boolean) => ({
    idempotencyKey: `tx_${livemode}:authorize`,
    capture: true,
    chargeId: "tx_1",
    pan: "4242424242424242",
    expMonth: 12,
    expYear: 2031,
    amount: 100,
    currency: "USD",
    livemode,
    now: new Date("2026-11-27T00:00:00Z"),
  });
  const processor = withSimulatedAcquirerErrors(createSimulatorProcessor());

  it("fails a sandbox authorization made inside simulatingAcquirerError with processing_error", async () => {
    const failed = await simulatingAcquirerError(() => processor.authorizeCard(authorization(false)));
    expect(failed).toMatchObject({ approved: false, failureCode: "processing_error" });
  });

  it("never fails a production authorization, nor one outside it", async () => {
    expect(await simulatingAcquirerError(() => processor.authorizeCard(authorization(true)))).toMatchObject({
      approved: true,
    });
    expect(await processor.authorizeCard(authorization(false))).toMatchObject({ approved: true });
  });

  it("keeps the wrapped acquirer's other methods", async () => {
    const action = await processor.startLocalPayment({
      idempotencyKey: "tx_1:start_local",
      chargeId: "tx_1",
      method: "pix",
      amount: 100,
      currency: "BRL",
      now: new Date(),
    });
    expect(action.type).toBe("display_qr_code");
  });
});
