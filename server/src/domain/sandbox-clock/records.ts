import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";

/**
 * The sandbox clock of a store (SandboxClock in spec/resources/sandbox-clock.tsp): one document, id
 * `sandbox`, made by the first advance. Every instance on the store reads its offset.
 */
export interface SandboxClockDoc extends BaseDoc {
  /** How far the sandbox runs ahead of the server's own clock, in milliseconds; it only grows. */
  offset_ms: number;
  /**
   * While an advance runs: when its hold on the clock ends, on the server's own clock (renewed at
   * every step, so an advance whose instance died frees the clock); null otherwise.
   */
  advancing_until: string | null;
  updated_at: string;
}

export const sandboxClockCollections = {
  sandbox_clock: collection<SandboxClockDoc>([]),
};
