import type { NextFunction, Request, Response } from "express";
import { simulatingAcquirerError } from "../adapters/simulated-acquirer.ts";
import { DomainError } from "../domain/kernel/errors.ts";
import type { OperationId } from "./contract.ts";
import { sendProblem } from "./errors.ts";
import { PUBLIC_LIVEMODE } from "./idempotency.ts";
import { locals } from "./locals.ts";
import { problem } from "./problems.ts";
import type { FieldErrorCode } from "./validator-errors.ts";

// Failure injection, sandbox only: the Sandbox-Simulate header every POST accepts
// (spec/common/sandbox-simulate.tsp; docs/testing-your-integration.md "Failure injection"). The
// validator has already checked the value's shape; this step, in each POST's chain before the
// Idempotency-Key is claimed, does what it asks. Production refuses the header rather than ignore it:
// a production request that asked to fail and succeeded, or one that failed because a test header
// leaked into production code, would each be a surprise; a 400 naming the header is not.

export const SANDBOX_SIMULATE = "Sandbox-Simulate";

/** The operations that reach the acquirer with a card, where `acquirer_error` means something. */
const REACHES_THE_ACQUIRER = new Set<OperationId>(["createCharge", "payPaymentLink"]);

/** The longest `latency=<ms>` the contract's pattern allows (four digits). */
export const MAX_SIMULATED_LATENCY_MS = 9999;

export type SimulatedMode =
  | { mode: "timeout_after_commit" }
  | { mode: "acquirer_error" }
  | { mode: "rate_limited" }
  | { mode: "latency"; ms: number };

/** The header's value as the contract's pattern describes it, or null for anything else. */
export function parseSimulate(value: string): SimulatedMode | null {
  if (value === "timeout_after_commit" || value === "acquirer_error" || value === "rate_limited")
    return { mode: value };
  const latency = /^latency=([1-9][0-9]{0,3})$/.exec(value);
  if (latency) return { mode: "latency", ms: Number(latency[1]) };
  return null;
}

function refuse(message: string): DomainError {
  const errors: { param: string; code: FieldErrorCode; message: string }[] = [
    { param: SANDBOX_SIMULATE, code: "invalid_value", message },
  ];
  return new DomainError("invalid_request", `${SANDBOX_SIMULATE}: ${message}.`, { param: SANDBOX_SIMULATE, errors });
}

/**
 * `timeout_after_commit`: a success is not sent; the connection is closed instead, after the change
 * committed (and its Idempotency-Key record with it, domain/kernel/commit.ts), so the client sees what a
 * time-out after the commit looks like. A replay (Idempotent-Replayed) and a failure answer normally:
 * the failure is rehearsed once, on the request that commits.
 */
function dropTheAnswerAfterCommit(res: Response): void {
  const end = res.end.bind(res);
  // cast: res.end is overloaded (with or without data, an encoding, a callback); this passes whichever through.
  res.end = ((...args: Parameters<Response["end"]>) => {
    const committed =
      res.statusCode >= 200 && res.statusCode < 300 && res.getHeader("Idempotent-Replayed") === undefined;
    if (!committed) return end(...args);
    locals(res).simulated = "timeout_after_commit";
    res.socket?.destroy();
    return res;
  }) as Response["end"];
}

export interface SandboxSimulateOptions {
  /** How `latency=<ms>` waits (tests pass their own; the server waits in real time). */
  sleep?: (ms: number) => Promise<void>;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The front step of one POST operation's chain. */
export function sandboxSimulate(
  operation: { operationId: OperationId; public?: boolean },
  options: SandboxSimulateOptions = {},
) {
  const sleep = options.sleep ?? realSleep;
  return async (req: Request, res: Response, next: NextFunction) => {
    const value = req.get(SANDBOX_SIMULATE);
    if (value === undefined) return next();
    const livemode = operation.public ? locals(res)[PUBLIC_LIVEMODE] : locals(res).caller?.livemode;
    if (livemode !== false) {
      return next(
        refuse(
          "failure injection works only in the sandbox; send it with a sandbox key (`key_test_…`), never in production",
        ),
      );
    }
    const simulated = parseSimulate(value);
    if (simulated === null) {
      // The validator checks the contract's pattern first; this holds if it ever did not.
      return next(
        refuse(
          "expected `timeout_after_commit`, `acquirer_error`, `rate_limited` or `latency=<milliseconds>` (1 to 9999)",
        ),
      );
    }
    switch (simulated.mode) {
      case "rate_limited":
        res.setHeader("Retry-After", "1");
        sendProblem(
          res,
          problem(
            "rate_limited",
            "Too many requests (simulated by the Sandbox-Simulate header). Retry after the number of seconds in Retry-After.",
            {
              requestId: String(locals(res).requestId ?? ""),
            },
          ),
        );
        return;
      case "latency":
        await sleep(Math.min(simulated.ms, MAX_SIMULATED_LATENCY_MS));
        return next();
      case "timeout_after_commit":
        dropTheAnswerAfterCommit(res);
        return next();
      case "acquirer_error":
        if (!REACHES_THE_ACQUIRER.has(operation.operationId)) {
          return next(
            refuse(
              "`acquirer_error` applies only to a card charge (POST /v1/charges, a payment link's pay); this operation does not reach the acquirer",
            ),
          );
        }
        return simulatingAcquirerError(() => next());
    }
  };
}
