import { afterEach, describe, expect, it } from "vitest";
import { refusal, testDomain } from "../../../test-support/domain.ts";
import { createSimulatorProcessor } from "../../adapters/processor-simulator.ts";
import type { ThreeDSecureRequest } from "./processor.ts";

// 3-D Secure on card charges (spec/resources/three-d-secure.tsp; docs/three-d-secure.md): each test
// card's behaviour under each request, the challenge's answers, expiry, and that no money moves until
// the charge is authorized and captured.

type Ctx = ReturnType<typeof testDomain>;
let ctx: Ctx;
afterEach(() => ctx?.store.close());

async function charge(
  pan: string,
  options: { request?: ThreeDSecureRequest; capture?: boolean; returnUrl?: string; livemode?: boolean } = {},
) {
  const caller = ctx.caller(options.livemode ?? false);
  const merchant = await ctx.domain.merchants.create(caller, { name: "M" });
  const token = await ctx.domain.tokens.create(caller, { card: pan, holder: "A", exp_month: 12, exp_year: 2031 });
  const made = await ctx.domain.charges.create(caller, {
    merchant_id: merchant.id,
    amount: 1000,
    currency: "EUR",
    payment_method: { type: "card", token: token.id },
    capture: options.capture ?? true,
    ...(options.request ? { payment_method_options: { card: { request_three_d_secure: options.request } } } : {}),
    ...(options.returnUrl ? { return_url: options.returnUrl } : {}),
  });
  return { charge: made, merchant };
}

const balanceOf = async (merchantId: string) =>
  (await ctx.domain.balances.get(ctx.caller(), merchantId)).rows.find((r) => r.currency === "EUR") ?? null;
const eventTypes = async (txId: string) =>
  (await ctx.store.findAll("events", {}))
    .filter((e) => e.payload.tx_id === txId)
    .map((e) => e.type)
    .filter((t) => t !== "fraud.evaluated")
    .sort(); // several events of one commit share a time: compare them as a set

describe("the test cards under each request", () => {
  // [card, request, status, result, liability shift, eci]
  const table: [
    string,
    ThreeDSecureRequest,
    string,
    string | null | undefined,
    boolean | undefined,
    string | null | undefined,
  ][] = [
    ["4242424242424242", "automatic", "captured", undefined, undefined, undefined],
    ["4242424242424242", "any", "captured", "attempted", true, "06"],
    ["4242424242424242", "challenge", "captured", "attempted", true, "06"],
    ["5555555555554444", "any", "captured", "attempted", true, "01"],
    ["4000000000003055", "automatic", "captured", "authenticated", true, "05"],
    ["4000000000003055", "challenge", "requires_action", null, false, null],
    ["4000000000003220", "automatic", "requires_action", null, false, null],
    ["4000002760003184", "automatic", "requires_action", null, false, null],
    ["4000008400001629", "automatic", "requires_action", null, false, null],
    ["4000008400001280", "automatic", "declined", "processing_error", false, "07"],
    ["4000000000003097", "automatic", "captured", undefined, undefined, undefined],
    ["4000000000003097", "any", "declined", "processing_error", false, "07"],
    ["378282246310005", "automatic", "captured", undefined, undefined, undefined],
    ["378282246310005", "any", "captured", "not_supported", false, null],
  ];
  for (const [pan, request, status, result, shift, eci] of table) {
    it(`${pan} with ${request}: ${status}${result === undefined ? ", no 3-D Secure" : `, ${result}`}`, async () => {
      ctx = testDomain();
      const { charge: made } = await charge(pan, { request });
      expect(made.status).toBe(status);
      if (result === undefined) {
        expect(made.three_d_secure ?? null).toBeNull();
      } else {
        expect(made.three_d_secure).toMatchObject({ result, liability_shift: shift, eci, version: "2.2.0" });
      }
      if (status === "declined") {
        expect(made.failure_code).toBe("authentication_failed");
        expect(made.failure_message).toMatch(/3-D Secure/);
      }
    });
  }
});

describe("a challenge", () => {
  it("waits requires_action with a redirect, moving no money, then Complete captures", async () => {
    ctx = testDomain();
    const { charge: made, merchant } = await charge("4000000000003220", { returnUrl: "https://shop.example/done" });
    expect(made.status).toBe("requires_action");
    expect(made.next_action).toMatchObject({
      type: "redirect_to_url",
      return_url: "https://shop.example/done",
      expires_at: "2026-11-21T11:00:00.000000Z",
    });
    expect(made.next_action?.url).toMatch(new RegExp(`^https://pay\\.example\\.com/3ds/${made.id}\\?t=[\\w-]{43}$`));
    expect(made.amount_captured).toBe(0);
    expect(await balanceOf(merchant.id)).toBeNull();
    expect(await eventTypes(made.id)).toEqual(["payment.requires_action"]);

    const done = await ctx.domain.charges.answerChallenge(ctx.caller(), made.id, "complete");
    expect(done).toMatchObject({ status: "captured", amount_captured: 1000, next_action: null, expires_at: null });
    expect(done.three_d_secure).toMatchObject({ result: "authenticated", liability_shift: true, eci: "05" });
    expect(await balanceOf(merchant.id)).toMatchObject({ available: 1000 });
    expect(await eventTypes(made.id)).toEqual(["payment.authorized", "payment.captured", "payment.requires_action"]);
  });

  it("with capture: false is authorized, and a partial capture then works", async () => {
    ctx = testDomain();
    const { charge: made, merchant } = await charge("4000000000003220", { capture: false });
    const authorized = await ctx.domain.charges.answerChallenge(ctx.caller(), made.id, "complete");
    expect(authorized).toMatchObject({ status: "authorized", amount_captured: 0 });
    expect(await balanceOf(merchant.id)).toBeNull();
    const captured = await ctx.domain.charges.capture(ctx.caller(), made.id, 400);
    expect(captured).toMatchObject({ status: "captured", amount_captured: 400 });
    expect(await balanceOf(merchant.id)).toMatchObject({ available: 400 });
  });

  it("Fail declines it (authentication_failed), moving no money", async () => {
    ctx = testDomain();
    const { charge: made, merchant } = await charge("4000000000003220");
    const failed = await ctx.domain.charges.answerChallenge(ctx.caller(), made.id, "fail");
    expect(failed).toMatchObject({ status: "declined", failure_code: "authentication_failed", next_action: null });
    expect(failed.three_d_secure).toMatchObject({ result: "failed", liability_shift: false, eci: "07" });
    expect(await balanceOf(merchant.id)).toBeNull();
    expect(await eventTypes(made.id)).toEqual(["payment.failed", "payment.requires_action"]);
  });

  it("the card Stripe declines after authentication is declined card_declined once authenticated", async () => {
    ctx = testDomain();
    const { charge: made } = await charge("4000008400001629");
    const declined = await ctx.domain.charges.answerChallenge(ctx.caller(), made.id, "complete");
    expect(declined).toMatchObject({ status: "declined", failure_code: "card_declined" });
    expect(declined.three_d_secure).toMatchObject({ result: "authenticated", liability_shift: true });
  });

  it("is answered once: a second answer, capture and void are refused (409)", async () => {
    ctx = testDomain();
    const { charge: made } = await charge("4000000000003220", { capture: false });
    for (const attempt of [
      () => ctx.domain.charges.capture(ctx.caller(), made.id),
      () => ctx.domain.charges.void(ctx.caller(), made.id),
    ]) {
      expect((await refusal(attempt())).code).toBe("invalid_state_transition");
    }
    await ctx.domain.charges.answerChallenge(ctx.caller(), made.id, "complete");
    const again = await refusal(ctx.domain.charges.answerChallenge(ctx.caller(), made.id, "fail"));
    expect(again.code).toBe("invalid_state_transition");
    expect(again.message).toMatch(/only requires_action/);
  });

  it("expires unanswered after THREE_D_SECURE_EXPIRY_SECONDS through the expiry job", async () => {
    ctx = testDomain();
    const { charge: made } = await charge("4000000000003220");
    ctx.advance(3599);
    expect(await ctx.domain.charges.expireDue(false)).toBe(0);
    expect(await ctx.domain.charges.nextExpiry(false, ctx.now())).toBe("2026-11-21T11:00:00.000000Z");
    ctx.advance(1);
    expect(await ctx.domain.jobs.expire()).toBe(1);
    const expired = await ctx.domain.charges.get(ctx.caller(), made.id);
    expect(expired).toMatchObject({ status: "expired", next_action: null });
    expect(await eventTypes(made.id)).toEqual(["payment.expired", "payment.requires_action"]);
  });

  it("the sandbox helper answers 404 in production; the page's link opens only with its token", async () => {
    ctx = testDomain();
    const { charge: made } = await charge("4000000000003220", { livemode: true });
    expect((await refusal(ctx.domain.charges.answerChallenge(ctx.caller(true), made.id, "complete"))).code).toBe(
      "not_found",
    );
    const token = new URL(made.next_action?.url ?? "").searchParams.get("t") ?? "";
    expect((await ctx.domain.charges.challengeOf(made.id, token)).id).toBe(made.id);
    // The token with its last character changed (to another one: a random token ends in "A" one time in 62).
    const tampered = `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`;
    expect((await refusal(ctx.domain.charges.challengeOf(made.id, tampered))).code).toBe("not_found");
  });
});

/** A challenged charge (card ...3220) from a VPN address (score 48) with review from 30: held for review. */
async function challengedForReview() {
  await ctx.domain.fraud.settings.update(ctx.caller(), { review_threshold: 30 });
  const merchant = await ctx.domain.merchants.create(ctx.caller(), { name: "M" });
  const token = await ctx.domain.tokens.create(ctx.caller(), {
    card: "4000000000003220",
    holder: "A",
    exp_month: 12,
    exp_year: 2031,
  });
  const made = await ctx.domain.charges.create(ctx.caller(), {
    merchant_id: merchant.id,
    amount: 1000,
    currency: "EUR",
    payment_method: { type: "card", token: token.id },
    customer: { ip: "203.0.113.9" },
  });
  return { merchant, made };
}

describe("a challenge on a charge the fraud evaluation holds for review", () => {
  it("is authorized and held (review open) once completed, not captured", async () => {
    ctx = testDomain();
    // A VPN address scores 48: with review from 30 the charge is held; its issuer still asks for a challenge.
    const { merchant, made } = await challengedForReview();
    expect(made).toMatchObject({ status: "requires_action", review: null });
    const held = await ctx.domain.charges.answerChallenge(ctx.caller(), made.id, "complete");
    expect(held).toMatchObject({ status: "authorized", amount_captured: 0, review: { status: "open" } });
    expect(await balanceOf(merchant.id)).toBeNull();
    const approved = await ctx.domain.charges.approveReview(ctx.caller(), made.id);
    expect(approved).toMatchObject({ status: "captured", amount_captured: 1000 });
  });
});

describe("an authorization after the challenge that the acquirer takes undecided (Received / Pending)", () => {
  /** The simulator, whose authorizations are taken undecided: the acquirer's AUTHORISATION decides them. */
  function undecidedAfterChallenge() {
    const sim = createSimulatorProcessor();
    return testDomain({
      processor: {
        ...sim,
        authorizeCard: async (request) => ({ approved: false, undecided: { reference: `PSP_${request.chargeId}` } }),
      },
    });
  }
  const noMark = async () => {};

  it("leaves the charge pending with the acquirer's reference, its intent resolved; AUTHORISATION captures it", async () => {
    ctx = undecidedAfterChallenge();
    const { charge: made, merchant } = await charge("4000000000003220");
    const answered = await ctx.domain.charges.answerChallenge(ctx.caller(), made.id, "complete");
    expect(answered).toMatchObject({
      status: "pending",
      processor_ref: `PSP_${made.id}`,
      amount_captured: 0,
      next_action: null,
      expires_at: null,
      three_d_secure: { result: "authenticated", liability_shift: true },
    });
    expect(await ctx.store.get("acquirer_intents", `${made.id}:authorize`)).toMatchObject({ state: "resolved" });
    expect(await eventTypes(made.id)).toEqual(["payment.requires_action"]);
    expect(await balanceOf(merchant.id)).toBeNull();
    // The challenge is over: a second answer is refused, and the expiry job leaves it alone.
    expect((await refusal(ctx.domain.charges.answerChallenge(ctx.caller(), made.id, "complete"))).code).toBe(
      "invalid_state_transition",
    );
    ctx.advance(3601);
    expect(await ctx.domain.charges.expireDue(false)).toBe(0);

    const outcome = { succeeded: true, reference: `PSP_${made.id}` };
    expect(await ctx.domain.charges.acquirerOutcomes.authorization(false, made.id, outcome, noMark)).toBe("applied");
    expect(await ctx.domain.charges.load(false, made.id)).toMatchObject({ status: "captured", amount_captured: 1000 });
    expect(await eventTypes(made.id)).toEqual(["payment.authorized", "payment.captured", "payment.requires_action"]);
  });

  it("holds it for review once authorized when the evaluation decided `review`", async () => {
    ctx = undecidedAfterChallenge();
    // A VPN address scores 48: with review from 30 the charge is held once its authorization is decided.
    const { merchant, made } = await challengedForReview();
    const answered = await ctx.domain.charges.answerChallenge(ctx.caller(), made.id, "complete");
    expect(answered).toMatchObject({ status: "pending", review: null });
    const outcome = { succeeded: true, reference: `PSP_${made.id}` };
    await ctx.domain.charges.acquirerOutcomes.authorization(false, made.id, outcome, noMark);
    expect(await ctx.domain.charges.load(false, made.id)).toMatchObject({
      status: "authorized",
      amount_captured: 0,
      review: { status: "open", capture: true },
    });
    expect(await balanceOf(merchant.id)).toBeNull();
    expect(await ctx.domain.charges.approveReview(ctx.caller(), made.id)).toMatchObject({
      status: "captured",
      amount_captured: 1000,
    });
  });
});
