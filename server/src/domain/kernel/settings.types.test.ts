import { describe, expect, it } from "vitest";
import type { cashoutsArea } from "../cashouts/area.ts";
import type { chargesArea } from "../charges/area.ts";
import type { DomainDeps, UnmetDeps } from "../index.ts";
import type { webhooksArea } from "../webhooks/area.ts";
import type { DomainSettings } from "./settings.ts";

// An area sees the configuration's slices it names in its area.ts (`settings: SettingsOf<...>`) and no
// others, and the domain must be given every slice an area names (index.ts DEPS_ARE_GIVEN). Each
// `@ts-expect-error` below is something `tsc` must refuse (were it accepted, the directive itself would
// fail `tsc -p server`); the functions are never called.

type SettingsSeenBy<A extends { make(ctx: never): unknown }> = Parameters<A["make"]>[0] extends {
  deps: { settings: infer S };
}
  ? S
  : never;

declare const cashouts: SettingsSeenBy<typeof cashoutsArea>;
declare const charges: SettingsSeenBy<typeof chargesArea>;
declare const webhooks: SettingsSeenBy<typeof webhooksArea>;

function readsUndeclared() {
  return [
    // @ts-expect-error cashouts named only their own slice, not the webhooks'
    cashouts.webhooks.timeoutMs,
    // @ts-expect-error nor the disputes' fees
    charges.disputes.fees,
    // @ts-expect-error the webhooks area named webhooks and events, not the request log
    webhooks.requestLog.retentionDays,
  ];
}

function readsDeclared() {
  return [cashouts.cashouts.pendingSeconds, charges.charges.intentLockSeconds, webhooks.events.retentionDays];
}

/** The domain's deps with one slice left out. */
type Without<K extends keyof DomainSettings> = Omit<DomainDeps, "settings"> & { settings: Omit<DomainSettings, K> };

// The whole DomainSettings meets every area; without the cashouts slice, the cashouts area is named.
const given: [UnmetDeps] extends [never] ? true : false = true;
const unmet: UnmetDeps<Without<"cashouts">> = "cashouts";
// @ts-expect-error only the area that named the missing slice is unmet
const notCharges: UnmetDeps<Without<"cashouts">> = "charges";

describe("settings slices (type test)", () => {
  it("an area reads only the slices it names, and the domain must give them all (checked by tsc)", () => {
    expect([readsUndeclared, readsDeclared].every((f) => typeof f === "function")).toBe(true);
    expect([given, unmet, notCharges]).toEqual([true, "cashouts", "charges"]);
  });
});
