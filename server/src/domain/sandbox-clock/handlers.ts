import type { HandlerKit, Handlers } from "../kernel/operations.ts";
import type { SandboxClock, SandboxClockResult } from "./sandbox-clock.ts";
import * as serialize from "./serialize.ts";

// The sandbox clock (spec/resources/sandbox-clock.tsp; scope `*`).

export function sandboxClockHandlers({ sandboxClock }: { sandboxClock: SandboxClock }, { answer }: HandlerKit) {
  return {
    getSandboxClock: async ({ caller }) => ({
      status: 200,
      body: serialize.sandboxClock(await sandboxClock.read(caller)),
    }),
    advanceSandboxClock: answer(200, serialize.sandboxClockAdvance, ({ caller, body }) =>
      sandboxClock.advance(caller, body),
    ),
    resetSandboxClock: answer(
      200,
      (r: SandboxClockResult) => serialize.sandboxClock(r.clock),
      ({ caller }) => sandboxClock.reset(caller),
    ),
  } satisfies Partial<Handlers>;
}
