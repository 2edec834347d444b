import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";
import type { AreaDocs, AreaStore, AreaTx } from "../kernel/store.ts";

/**
 * The sandbox clock of a store (SandboxClock in spec/resources/sandbox-clock.tsp): one document, id
 * `sandbox`, made by the first advance. Every instance on the store reads its offset.
 */
export interface SandboxClockDoc extends BaseDoc {
  /** How far the sandbox runs ahead of the server's own clock, in milliseconds; it grows until a reset. */
  offset_ms: number;
  /** Resets so far (missing on a store made before resets existed: 0). */
  epoch?: number;
  /** When the latest resets were made, on the clock ids are stamped with (kernel/ids.ts), oldest first (at most MAX_RESETS_KEPT). */
  resets?: string[];
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

/** The store as the sandbox-clock area sees it: its own collections and the kernel's (kernel/store.ts). */
export type SandboxClockStore = AreaStore<typeof sandboxClockCollections>;
export type SandboxClockTx = AreaTx<typeof sandboxClockCollections>;
export type SandboxClockDocs = AreaDocs<typeof sandboxClockCollections>;
