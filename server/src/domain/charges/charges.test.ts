import { afterEach, describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { DomainError } from "../kernel/errors.ts";
import type { ChargeStatus } from "./records.ts";
import { CHARGE_TRANSITIONS } from "./state.ts";

// The charge use cases against the state machine (ChargeStatus, spec/resources/charges.tsp): each action
// from each status. The table itself, every allowed and refused pair, is state.test.ts's.

const STATUSES = Object.keys(CHARGE_TRANSITIONS) as ChargeStatus[];
type Ctx = ReturnType<typeof testDomain>;
type Action = "capture" | "void" | "refund" | "complete" | "expire" | "authenticate";

/** Builds a charge in the given status through the use cases themselves. */
async function chargeIn(ctx: Ctx, status: ChargeStatus) {
  const { domain, caller } = ctx;
  const merchant = await domain.merchants.create(caller(), { name: "M" });
  const card = (pan: string) =>
    domain.tokens.create(caller(), { card: pan, holder: "A", exp_month: 12, exp_year: 2031 });
  const byCard = async (pan: string, capture: boolean) =>
    domain.charges.create(caller(), {
      merchant_id: merchant.id,
      amount: 1000,
      currency: "USD",
      payment_method: { type: "card", token: (await card(pan)).id },
      capture,
    });
  const byPix = () =>
    domain.charges.create(caller(), {
      merchant_id: merchant.id,
      amount: 1000,
      currency: "BRL",
      payment_method: { type: "pix" },
    });
  switch (status) {
    case "pending":
      return byPix();
    case "requires_action":
      return byCard("4000000000003220", true); // 3-D Secure: its issuer always asks for a challenge
    case "authorized":
      return byCard("4242424242424242", false);
    case "captured":
      return byCard("4242424242424242", true);
    case "partially_refunded": {
      const c = await byCard("4242424242424242", true);
      await domain.charges.refund(caller(), c.id, { amount: 100 });
      return domain.charges.get(caller(), c.id);
    }
    case "refunded": {
      const c = await byCard("4242424242424242", true);
      await domain.charges.refund(caller(), c.id, {});
      return domain.charges.get(caller(), c.id);
    }
    case "declined":
      return byCard("4000000000000002", true);
    case "voided": {
      const c = await byCard("4242424242424242", false);
      return domain.charges.void(caller(), c.id);
    }
    case "expired": {
      const c = await byPix();
      return domain.charges.expire(caller(), c.id);
    }
    case "blocked":
      return null; // only the fraud engine (not built yet) blocks; nothing can leave blocked
  }
}

function act(ctx: Ctx, action: Action, id: string) {
  const { domain, caller } = ctx;
  switch (action) {
    case "capture":
      return domain.charges.capture(caller(), id);
    case "void":
      return domain.charges.void(caller(), id);
    case "refund":
      return domain.charges.refund(caller(), id, { amount: 100 });
    case "complete":
      return domain.charges.complete(caller(), id);
    case "expire":
      return domain.charges.expire(caller(), id);
    case "authenticate":
      return domain.charges.answerChallenge(caller(), id, "complete");
  }
}

/** Which action succeeds from which status, and the status it leads to. */
const EXPECTED: Record<Action, Partial<Record<ChargeStatus, ChargeStatus>>> = {
  capture: { authorized: "captured" },
  void: { authorized: "voided" },
  refund: { captured: "partially_refunded", partially_refunded: "partially_refunded" },
  complete: { pending: "captured" },
  expire: { pending: "expired", requires_action: "expired" },
  authenticate: { requires_action: "captured" },
};

describe("charge transitions through the use cases", () => {
  let ctx: Ctx;
  afterEach(() => ctx?.store.close());

  for (const action of Object.keys(EXPECTED) as Action[]) {
    for (const from of STATUSES.filter((s) => s !== "blocked")) {
      const to = EXPECTED[action][from];
      it(`${action} on a ${from} charge ${to ? `→ ${to}` : "is refused (409)"}`, async () => {
        ctx = testDomain();
        const charge = await chargeIn(ctx, from);
        if (!charge) throw new Error(`no ${from} charge`);
        expect(charge.status).toBe(from);
        if (to) {
          const result = await act(ctx, action, charge.id);
          expect((await ctx.domain.charges.get(ctx.caller(), charge.id)).status).toBe(to);
          expect(result).toBeTruthy();
        } else {
          const err = await act(ctx, action, charge.id).then(
            () => null,
            (e: unknown) => e,
          );
          expect(err).toBeInstanceOf(DomainError);
          expect((err as DomainError).code).toBe("invalid_state_transition");
          expect((await ctx.domain.charges.get(ctx.caller(), charge.id)).status).toBe(from);
        }
      });
    }
  }
});

describe("jobs", () => {
  it("expires pending charges once their next_action has run out, and only those", async () => {
    const ctx = testDomain();
    const pix = await chargeIn(ctx, "pending"); // pix: one hour
    const merchant = await ctx.domain.merchants.create(ctx.caller(), { name: "B" });
    const boleto = await ctx.domain.charges.create(ctx.caller(), {
      merchant_id: merchant.id,
      amount: 500,
      currency: "BRL",
      payment_method: { type: "boleto" }, // three days
    });
    expect(await ctx.domain.charges.expireDue(false)).toBe(0);
    ctx.advance(3601);
    expect(await ctx.domain.charges.expireDue(false)).toBe(1);
    expect((await ctx.domain.charges.get(ctx.caller(), pix?.id ?? "")).status).toBe("expired");
    expect((await ctx.domain.charges.get(ctx.caller(), boleto.id)).status).toBe("pending");
    ctx.advance(3 * 86400);
    expect(await ctx.domain.charges.expireDue(false)).toBe(1);
    expect(await ctx.domain.charges.expireDue(false)).toBe(0);
    const events = await ctx.store.findAll("events", { type: "payment.expired" });
    expect(events.map((e) => e.payload.tx_id).sort()).toEqual([pix?.id, boleto.id].sort());
    await ctx.store.close();
  });

  it("settles production captures after the delay, once", async () => {
    const ctx = testDomain({ settlementDelaySeconds: 3600 });
    const live = ctx.caller(true);
    const merchant = await ctx.domain.merchants.create(live, { name: "Live" });
    const token = await ctx.domain.tokens.create(live, {
      card: "4242424242424242",
      holder: "A",
      exp_month: 12,
      exp_year: 2031,
    });
    await ctx.domain.charges.create(live, {
      merchant_id: merchant.id,
      amount: 900,
      currency: "EUR",
      payment_method: { type: "card", token: token.id },
    });
    const balance = async () => (await ctx.domain.balances.get(live, merchant.id)).rows[0];
    expect(await balance()).toMatchObject({ available: 0, pending: 900 });
    expect(await ctx.domain.jobs.settle()).toBe(0);
    ctx.advance(3600);
    expect(await ctx.domain.jobs.settle()).toBe(1);
    expect(await ctx.domain.jobs.settle()).toBe(0);
    expect(await balance()).toMatchObject({ available: 900, pending: 0 });
    await ctx.store.close();
  });
});
