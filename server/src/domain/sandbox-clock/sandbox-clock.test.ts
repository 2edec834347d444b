import { describe, expect, it } from "vitest";
import { refusal, testDomain } from "../../../test-support/domain.ts";
import { COLLECTIONS } from "../areas.ts";
import type { Caller } from "../kernel/caller.ts";
import { recordEvent } from "../kernel/events.ts";
import { iso } from "../kernel/time.ts";
import { extendLeases } from "../webhooks/dispatcher.ts";
import { parseSchedule } from "../webhooks/schedule.ts";
import type { DeliveryRequest, DeliveryResult, WebhookSender } from "../webhooks/sender.ts";
import { DELIVERY_MACHINE } from "../webhooks/state.ts";
import { MAX_OFFSET_MS } from "./sandbox-clock.ts";

// The sandbox clock (spec/resources/sandbox-clock.tsp): the sandbox's time runs ahead of the server's by
// an offset kept in the store; an advance steps through what comes due, in order, runs it at its own
// time and says what ran; production's time never moves. The server's own clock is the test's.

const DAY = 86_400;
const START = new Date("2026-11-21T10:00:00Z");

function world(options: Parameters<typeof testDomain>[0] = {}) {
  const t = testDomain({ start: START, ...options });
  const sandbox = t.caller(false);
  const live = t.caller(true);
  return { ...t, sandbox, live };
}

async function card(t: ReturnType<typeof world>, caller: Caller) {
  return t.domain.tokens.create(caller, { card: "4242424242424242", holder: "Ada", exp_month: 12, exp_year: 2030 });
}

async function merchant(t: ReturnType<typeof world>, caller: Caller) {
  return t.domain.merchants.create(caller, { name: "Clockwork Coffee" });
}

describe("reading the sandbox clock", () => {
  it("starts on the server's time with no offset; production gets 404 for both operations", async () => {
    const t = world();
    expect(await t.domain.sandboxClock.read(t.sandbox)).toEqual({ now: START, offsetMs: 0 });
    expect(await refusal(t.domain.sandboxClock.read(t.live))).toMatchObject({ code: "not_found" });
    expect(await refusal(t.domain.sandboxClock.advance(t.live, { seconds: 60 }))).toMatchObject({ code: "not_found" });
    expect(await t.store.get("sandbox_clock", "sandbox")).toBeNull();
  });
});

describe("advancing", () => {
  it("moves only the sandbox: what it makes afterwards carries the advanced time, production keeps the server's", async () => {
    const t = world();
    const result = await t.domain.sandboxClock.advance(t.sandbox, { seconds: 2 * DAY });
    expect(result.from).toEqual(START);
    expect(result.clock).toEqual({ now: new Date(START.getTime() + 2 * DAY * 1000), offsetMs: 2 * DAY * 1000 });
    const inSandbox = await merchant(t, t.sandbox);
    const inProduction = await merchant(t, t.live);
    expect(inSandbox.created_at).toBe("2026-11-23T10:00:00.000000Z");
    expect(inProduction.created_at).toBe("2026-11-21T10:00:00.000000Z");
    const [sandboxEvent] = await t.store.findAll("events", { livemode: false, type: "merchant.created" });
    expect(sandboxEvent?.created_at).toBe("2026-11-23T10:00:00.000001Z");
    // The server's clock runs on; the sandbox's runs with it, two days ahead.
    t.advance(60);
    expect(t.domain.clock.now(false).toISOString()).toBe("2026-11-23T10:01:00.000Z");
    expect(t.domain.clock.now(true).toISOString()).toBe("2026-11-21T10:01:00.000Z");
  });

  it("is kept in the store: another instance on the same store reads it at its next refresh", async () => {
    const a = world();
    let clock = START;
    const b = testDomain({ store: a.store, vaultKeys: a.vaultKeys, now: () => clock });
    await a.domain.sandboxClock.advance(a.sandbox, { seconds: DAY });
    expect(b.domain.clock.now(false)).toEqual(START);
    clock = new Date(START.getTime() + 1000);
    expect(await b.domain.sandboxClock.read(b.caller(false))).toEqual({
      now: new Date(START.getTime() + (DAY + 1) * 1000),
      offsetMs: DAY * 1000,
    });
    expect(await a.store.get("sandbox_clock", "sandbox")).toMatchObject({
      offset_ms: DAY * 1000,
      advancing_until: null,
    });
  });

  it("never goes back, and takes exactly one of seconds and to", async () => {
    const t = world();
    await t.domain.sandboxClock.advance(t.sandbox, { to: "2026-11-22T10:00:00Z" });
    expect(await refusal(t.domain.sandboxClock.advance(t.sandbox, { to: "2026-11-22T09:59:59Z" }))).toMatchObject({
      code: "invalid_request",
      param: "to",
    });
    expect(await refusal(t.domain.sandboxClock.advance(t.sandbox, {}))).toMatchObject({ param: "seconds" });
    expect(
      await refusal(t.domain.sandboxClock.advance(t.sandbox, { seconds: 1, to: "2026-11-23T00:00:00Z" })),
    ).toMatchObject({ param: "seconds" });
    expect(await refusal(t.domain.sandboxClock.advance(t.sandbox, { to: "2027-11-24T10:00:00Z" }))).toMatchObject({
      param: "to",
    });
    // Moving to the time it already is changes nothing.
    const same = await t.domain.sandboxClock.advance(t.sandbox, { to: "2026-11-22T10:00:00Z" });
    expect(same.clock.offsetMs).toBe(DAY * 1000);
  });

  it("runs at most 3660 days ahead of the server's clock in all: at the bound timestamps and cards still work", async () => {
    const t = world();
    for (let i = 0; i < 10; i++) await t.domain.sandboxClock.advance(t.sandbox, { seconds: 366 * DAY });
    expect(t.domain.clock.offsetMs()).toBe(MAX_OFFSET_MS);
    const beyond = await refusal(t.domain.sandboxClock.advance(t.sandbox, { seconds: 1 }));
    expect(beyond).toMatchObject({ code: "invalid_request", param: "seconds" });
    expect(beyond.message).toContain("more than 3660 days (about ten years) ahead of real time");
    expect(beyond.message).toContain("it can move 0 seconds more now, to 2036-11-28T10:00:00.000000Z");
    expect(await refusal(t.domain.sandboxClock.advance(t.sandbox, { to: "2036-12-31T00:00:00Z" }))).toMatchObject({
      param: "to",
    });
    // The server's clock runs on, and the sandbox's with it, at the same distance.
    t.advance(DAY);
    expect(t.domain.clock.now(false).toISOString()).toBe("2036-11-29T10:00:00.000Z");
    const token = await t.domain.tokens.create(t.sandbox, {
      card: "4242424242424242",
      holder: "Ada",
      exp_month: 12,
      exp_year: 2037,
    });
    expect(token.created_at).toMatch(/^2036-11-29T10:00:00\.\d{6}Z$/);
  });

  it("refuses a second advance while one holds the clock (409), and takes over a hold whose instance died", async () => {
    const t = world();
    await t.domain.sandboxClock.advance(t.sandbox, { seconds: 1 });
    await t.store.update("sandbox_clock", "sandbox", {
      set: { advancing_until: iso(new Date(START.getTime() + 30_000)) },
    });
    expect(await refusal(t.domain.sandboxClock.advance(t.sandbox, { seconds: 1 }))).toMatchObject({ code: "conflict" });
    t.advance(31);
    expect((await t.domain.sandboxClock.advance(t.sandbox, { seconds: 1 })).clock.offsetMs).toBe(2000);
  });
});

describe("what an advance runs, in order", () => {
  it("two days: settles a capture, expires a boleto made the day before (payment.expired), a pix at its hour", async () => {
    const t = world({ sandboxSettlementDelaySeconds: 2 * DAY });
    const m = await merchant(t, t.sandbox);
    const boleto = await t.domain.charges.create(t.sandbox, {
      merchant_id: m.id,
      amount: 5000,
      currency: "BRL",
      payment_method: { type: "boleto" },
    });
    await t.domain.sandboxClock.advance(t.sandbox, { seconds: DAY });
    const token = await card(t, t.sandbox);
    const captured = await t.domain.charges.create(t.sandbox, {
      merchant_id: m.id,
      amount: 2500,
      currency: "USD",
      payment_method: { type: "card", token: token.id },
    });
    expect(captured.status).toBe("captured");
    expect((await t.domain.balances.get(t.sandbox, m.id)).rows).toMatchObject([
      { currency: "USD", available: 0, pending: 2500 },
    ]);
    const pix = await t.domain.charges.create(t.sandbox, {
      merchant_id: m.id,
      amount: 900,
      currency: "BRL",
      payment_method: { type: "pix" },
    });

    const { ran, clock } = await t.domain.sandboxClock.advance(t.sandbox, { seconds: 2 * DAY });
    expect(ran).toMatchObject({ balances_settled: 1, charges_expired: 2, reviews_expired: 0 });
    expect(clock.now.toISOString()).toBe("2026-11-24T10:00:00.000Z");
    expect((await t.domain.balances.get(t.sandbox, m.id)).rows).toMatchObject([
      { currency: "USD", available: 2500, pending: 0 },
    ]);
    expect((await t.domain.charges.get(t.sandbox, boleto.id)).status).toBe("expired");
    const expired = await t.store.findAll("events", { type: "payment.expired" }, 10, {
      by: "created_at",
      direction: "asc",
    });
    // Each at its own time: the pix after its hour, the boleto after its three days.
    expect(expired.map((e) => [e.payload.tx_id, e.created_at.slice(0, 19)])).toEqual([
      [pix.id, "2026-11-22T11:00:00"],
      [boleto.id, "2026-11-24T10:00:00"],
    ]);
  });

  it("takes a cashout through its steps on the way: sent after its pending hour, paid a transit period later", async () => {
    const t = world({ cashoutPendingSeconds: 3600, cashoutTransitSeconds: DAY });
    const m = await merchant(t, t.sandbox);
    const token = await card(t, t.sandbox);
    await t.domain.charges.create(t.sandbox, {
      merchant_id: m.id,
      amount: 10_000,
      currency: "USD",
      payment_method: { type: "card", token: token.id },
    });
    const cashout = await t.domain.cashouts.create(t.sandbox, {
      merchant_id: m.id,
      amount: 4000,
      currency: "USD",
      destination: {
        type: "us_bank_account",
        routing_number: "110000000",
        account_number: "000123456789",
        account_holder: "Clockwork Coffee",
      },
    });
    const { ran } = await t.domain.sandboxClock.advance(t.sandbox, { seconds: 2 * DAY });
    expect(ran).toMatchObject({ cashouts_sent: 1, cashouts_finished: 1 });
    expect(ran.steps).toBeGreaterThanOrEqual(3); // the send, the outcome, the target
    const paid = await t.domain.cashouts.get(t.sandbox, cashout.id);
    expect(paid.status).toBe("paid");
    expect(paid.updated_at.slice(0, 19)).toBe("2026-11-22T11:00:00");
  });

  it("counts the payment links whose expires_at it passed", async () => {
    const t = world();
    const m = await merchant(t, t.sandbox);
    const link = (expires_at: string) =>
      t.domain.paymentLinks.create(t.sandbox, {
        merchant_id: m.id,
        amount: 1000,
        currency: "USD",
        description: "Beans",
        expires_at,
      });
    await link("2026-11-21T12:00:00Z");
    await link("2026-11-25T12:00:00Z");
    const { ran } = await t.domain.sandboxClock.advance(t.sandbox, { seconds: DAY });
    expect(ran.payment_links_expired).toBe(1);
  });

  it("leaves production alone: its pending credits, expiries and cashouts wait for the server's clock", async () => {
    const t = world({ settlementDelaySeconds: DAY });
    const m = await merchant(t, t.live);
    const token = await card(t, t.live);
    await t.domain.charges.create(t.live, {
      merchant_id: m.id,
      amount: 2500,
      currency: "USD",
      payment_method: { type: "card", token: token.id },
    });
    const pix = await t.domain.charges.create(t.live, {
      merchant_id: m.id,
      amount: 900,
      currency: "BRL",
      payment_method: { type: "pix" },
    });
    const { ran } = await t.domain.sandboxClock.advance(t.sandbox, { seconds: 3 * DAY });
    expect(ran).toMatchObject({ balances_settled: 0, charges_expired: 0 });
    expect(await t.domain.jobs.settle()).toBe(0);
    expect(await t.domain.jobs.expire()).toBe(0);
    expect((await t.domain.charges.get(t.live, pix.id)).status).toBe("pending");
    t.advance(DAY);
    expect(await t.domain.jobs.settle()).toBe(1);
    expect(await t.domain.jobs.expire()).toBe(1);
  });
});

describe("webhook retries", () => {
  const failing = (): DeliveryResult => ({ kind: "response", status: 503, body: "down", latencyMs: 5 });

  function withSender(answer: (n: number) => DeliveryResult) {
    const sent: DeliveryRequest[] = [];
    const sender: WebhookSender = {
      send: async (request) => {
        sent.push(request);
        return answer(sent.length);
      },
    };
    const t = world({
      webhooks: { sender, random: () => 0.5, options: { sandboxSchedule: parseSchedule("5,30,120,600,1800,3600") } },
    });
    return { t, sent };
  }

  it("runs the retries that come due, each at its time on the sandbox clock, signed with the server's time", async () => {
    const { t, sent } = withSender(failing);
    await t.domain.webhooks.endpoints.create(t.sandbox, {
      url: "http://127.0.0.1:4242/hooks",
      enabled_events: ["*"],
      signature_scheme: "x_service_signature",
    });
    t.advance(1); // an endpoint receives the events made after it
    const event = await t.store.transaction((tx) =>
      recordEvent(tx, t.domain.clock, false, "merchant.created", {
        merchant_id: "mch_9Lm2QwErTy7UiOp3AsDf5GhJ",
        name: "Clockwork Coffee",
        status: "active",
      }),
    );
    await t.domain.webhooks.dispatcher.runOnce();
    expect(sent).toHaveLength(1);

    const { ran } = await t.domain.sandboxClock.advance(t.sandbox, { seconds: 2 * DAY });
    expect(ran.webhook_attempts).toBe(6); // the whole sandbox schedule
    expect(sent).toHaveLength(7);
    const [delivery] = await t.store.findAll("webhook_deliveries", { event_id: event.id });
    expect(delivery?.status).toBe("failed");
    const times = delivery?.attempts.map((a) => Date.parse(a.attempted_at) - START.getTime()) ?? [];
    expect(times).toEqual([1, 6, 36, 156, 756, 2556, 6156].map((s) => s * 1000));
    // Every signature is dated by the server's clock, which the receiver checks against its own.
    for (const request of sent) {
      expect(request.headers["x-service-signature"]).toMatch(new RegExp(`^t=${START.getTime() / 1000 + 1},`));
    }
  });

  it("keeps the lease of an attempt under way as long as it was, measured on the server's clock", async () => {
    const { t } = withSender(failing);
    const { endpoint } = await t.domain.webhooks.endpoints.create(t.sandbox, {
      url: "http://127.0.0.1:4242/hooks",
      enabled_events: ["*"],
      signature_scheme: "x_service_signature",
    });
    const leaseEnd = iso(new Date(START.getTime() + 15_000));
    await t.store.insert("webhook_deliveries", {
      id: "whd_leased00000000000000000",
      livemode: false,
      created_at: iso(START),
      updated_at: iso(START),
      endpoint_id: endpoint.id,
      event_id: "evt_leased00000000000000000",
      event_type: "webhook_endpoint.test",
      status: DELIVERY_MACHINE.start("pending"),
      mode: "manual",
      next_attempt_at: leaseEnd,
      claim: "another-instance:1",
      attempts: [],
    });
    // Beside it, what must keep its time: a sandbox retry waiting (no claim: it is due on the moved
    // clock) and a production attempt under way (production's clock does not move).
    const leased = await t.store.get("webhook_deliveries", "whd_leased00000000000000000");
    if (!leased) throw new Error("the leased delivery was not stored");
    await t.store.insert("webhook_deliveries", {
      ...leased,
      id: "whd_waiting0000000000000000",
      event_id: "evt_waiting0000000000000000",
      claim: null,
    });
    await t.store.insert("webhook_deliveries", {
      ...leased,
      id: "whd_live00000000000000000000",
      event_id: "evt_live00000000000000000000",
      livemode: true,
    });
    const extended = await t.store.transaction((tx) => extendLeases(tx, DAY * 1000, START));
    expect(extended).toBe(1);
    expect((await t.store.get("webhook_deliveries", "whd_leased00000000000000000"))?.next_attempt_at).toBe(
      iso(new Date(START.getTime() + (DAY + 15) * 1000)),
    );
    expect((await t.store.get("webhook_deliveries", "whd_waiting0000000000000000"))?.next_attempt_at).toBe(leaseEnd);
    expect((await t.store.get("webhook_deliveries", "whd_live00000000000000000000"))?.next_attempt_at).toBe(leaseEnd);
  });
});

describe("resetting", () => {
  const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
  /** Every string of a stored document that reads as a date, wherever it sits. */
  function dates(value: unknown, out: string[] = []): string[] {
    if (typeof value === "string" && /^[+-]?\d{4,6}-\d{2}-\d{2}T/.test(value)) out.push(value);
    else if (Array.isArray(value)) for (const v of value) dates(v, out);
    else if (typeof value === "object" && value !== null) for (const v of Object.values(value)) dates(v, out);
    return out;
  }

  it("at the bound: back to the server's time, every stored timestamp RFC 3339, the card made ten years ahead still pays", async () => {
    const t = world();
    for (let i = 0; i < 10; i++) await t.domain.sandboxClock.advance(t.sandbox, { seconds: 366 * DAY });
    expect(t.domain.clock.offsetMs()).toBe(MAX_OFFSET_MS);
    const m = await merchant(t, t.sandbox);
    const token = await t.domain.tokens.create(t.sandbox, {
      card: "4242424242424242",
      holder: "Ada",
      exp_month: 12,
      exp_year: 2040,
    });
    const before = await t.domain.charges.create(t.sandbox, {
      merchant_id: m.id,
      amount: 2500,
      currency: "USD",
      payment_method: { type: "card", token: token.id },
    });
    expect(before.created_at).toMatch(/^2036-11-28T/);

    t.advance(60);
    const reset = await t.domain.sandboxClock.reset(t.sandbox);
    expect(reset.from.toISOString()).toBe("2036-11-28T10:01:00.000Z");
    expect(reset.clock).toEqual({ now: new Date(START.getTime() + 60_000), offsetMs: 0 });
    expect(await t.domain.sandboxClock.read(t.sandbox)).toEqual({
      now: new Date(START.getTime() + 60_000),
      offsetMs: 0,
    });
    expect(await t.store.get("sandbox_clock", "sandbox")).toMatchObject({
      offset_ms: 0,
      epoch: 1,
      advancing_until: null,
    });

    // What was made ten years ahead is kept as it was, and still valid: its card pays on the real clock.
    expect((await t.domain.charges.get(t.sandbox, before.id)).created_at).toBe(before.created_at);
    const after = await t.domain.charges.create(t.sandbox, {
      merchant_id: m.id,
      amount: 1000,
      currency: "USD",
      payment_method: { type: "card", token: token.id },
    });
    expect(after.status).toBe("captured");
    // What is made now carries the server's time again, not the advanced series' next microsecond (the
    // server's series is one per process, kernel/time.ts: other tests of this file took it to 2026-11-22).
    expect(after.created_at).toMatch(/^2026-11-2[12]T/);
    for (const name of Object.keys(COLLECTIONS) as (keyof typeof COLLECTIONS)[]) {
      for (const doc of await t.store.findAll(name, {})) {
        for (const d of dates(doc)) expect(d, `${name} ${doc.id}`).toMatch(RFC3339);
      }
    }
    // The clock can go ahead again, the whole way.
    const again = await t.domain.sandboxClock.advance(t.sandbox, { seconds: 366 * DAY });
    expect(again.clock.offsetMs).toBe(366 * DAY * 1000);
  });

  it("is sandbox only (404 in production), changes nothing with no offset, and waits for no advance (409)", async () => {
    const t = world();
    expect(await refusal(t.domain.sandboxClock.reset(t.live))).toMatchObject({ code: "not_found" });
    expect((await t.domain.sandboxClock.reset(t.sandbox)).clock).toEqual({ now: START, offsetMs: 0 });
    expect(await t.store.get("sandbox_clock", "sandbox")).toBeNull();
    await t.domain.sandboxClock.advance(t.sandbox, { seconds: DAY });
    await t.store.update("sandbox_clock", "sandbox", {
      set: { advancing_until: iso(new Date(START.getTime() + 30_000)) },
    });
    expect(await refusal(t.domain.sandboxClock.reset(t.sandbox))).toMatchObject({ code: "conflict" });
    expect(t.domain.clock.offsetMs()).toBe(DAY * 1000);
  });

  it("reaches another instance on the store at its next refresh, though its offset is smaller", async () => {
    const a = world();
    const b = testDomain({ store: a.store, vaultKeys: a.vaultKeys, now: () => START });
    await a.domain.sandboxClock.advance(a.sandbox, { seconds: DAY });
    await b.domain.sandboxClock.refresh();
    expect(b.domain.clock.offsetMs()).toBe(DAY * 1000);
    await a.domain.sandboxClock.reset(a.sandbox);
    await b.domain.sandboxClock.refresh();
    expect(b.domain.clock.offsetMs()).toBe(0);
    expect(b.domain.clock.now(false)).toEqual(START);
  });

  it("keeps shown due times (a boleto expires when the clock reaches its expires_at again) and pulls waiting retries back", async () => {
    const t = world();
    const m = await merchant(t, t.sandbox);
    await t.domain.sandboxClock.advance(t.sandbox, { seconds: 30 * DAY });
    const boleto = await t.domain.charges.create(t.sandbox, {
      merchant_id: m.id,
      amount: 5000,
      currency: "BRL",
      payment_method: { type: "boleto" },
    });
    const retryAt = iso(new Date(START.getTime() + (30 * DAY + 600) * 1000));
    await t.store.insert("webhook_deliveries", {
      id: "whd_waiting0000000000000000",
      livemode: false,
      created_at: iso(new Date(START.getTime() + 30 * DAY * 1000)),
      updated_at: iso(new Date(START.getTime() + 30 * DAY * 1000)),
      endpoint_id: "we_none0000000000000000000",
      event_id: "evt_waiting0000000000000000",
      event_type: "webhook_endpoint.test",
      status: DELIVERY_MACHINE.start("pending"),
      mode: "manual",
      next_attempt_at: retryAt,
      claim: null,
      attempts: [],
    });
    await t.domain.sandboxClock.reset(t.sandbox);
    // Ten minutes after the reset, as it was ten minutes after the advanced time.
    expect((await t.store.get("webhook_deliveries", "whd_waiting0000000000000000"))?.next_attempt_at).toBe(
      iso(new Date(START.getTime() + 600_000)),
    );
    const kept = await t.domain.charges.get(t.sandbox, boleto.id);
    expect(kept.status).toBe("pending");
    // Three days on the real clock are not enough: its expiry is thirty-three days ahead.
    expect((await t.domain.sandboxClock.advance(t.sandbox, { seconds: 3 * DAY })).ran.charges_expired).toBe(0);
    expect((await t.domain.sandboxClock.advance(t.sandbox, { seconds: 31 * DAY })).ran.charges_expired).toBe(1);
  });

  it("the event stream follows the order events were made across it: no event made after it is missed", async () => {
    const t = world();
    await merchant(t, t.sandbox);
    await t.domain.sandboxClock.advance(t.sandbox, { seconds: 366 * DAY });
    await merchant(t, t.sandbox);
    const [advanced] = (await t.store.list("events", { livemode: false }, { limit: 1 })).data;
    if (!advanced) throw new Error("no event was recorded");
    const following = await t.domain.events.stream(t.sandbox, { follow: true });
    await t.domain.sandboxClock.reset(t.sandbox);
    const later = await t.domain.merchants.create(t.sandbox, { name: "After the reset" });

    const sent = async (request: Parameters<typeof t.domain.events.stream>[1]) => {
      const out: string[] = [];
      const stream = await t.domain.events.stream(t.sandbox, request);
      for await (const m of stream.messages(new AbortController().signal)) out.push(JSON.parse(m.data).merchant_id);
      return out;
    };
    // Resuming from the last event made on the advanced clock: the one made after the reset comes next,
    // though it carries an earlier time.
    expect(await sent({ lastEventId: advanced.id, follow: false })).toEqual([later.id]);
    // From the start: in the order they were made.
    const all = await sent({ follow: false });
    expect(all.at(-1)).toBe(later.id);
    expect(all).toHaveLength(3);
    // A stream that was following when the reset came gets it too.
    const aborts = new AbortController();
    const first = await following.messages(aborts.signal)[Symbol.asyncIterator]().next();
    aborts.abort();
    expect(first.value && JSON.parse(first.value.data)).toMatchObject({ merchant_id: later.id });
  });
});
