import type { Schemas } from "../kernel/operations.ts";
import { iso } from "../kernel/time.ts";
import type { SandboxClockReading, SandboxClockResult } from "./sandbox-clock.ts";

// The sandbox clock's readings and advances → the contract's SandboxClock and SandboxClockAdvance.

export const sandboxClock = (c: SandboxClockReading): Schemas["SandboxClock"] => ({
  object: "sandbox_clock",
  now: iso(c.now),
  offset_seconds: Math.floor(c.offsetMs / 1000),
  livemode: false,
});

export const sandboxClockAdvance = (r: SandboxClockResult): Schemas["SandboxClockAdvance"] => ({
  object: "sandbox_clock_advance",
  from: iso(r.from),
  clock: sandboxClock(r.clock),
  ran: { ...r.ran },
});
