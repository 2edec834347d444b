import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createLogger, loadConfig, startServer } from "@payments/server";
import { afterAll, describe, expect, it } from "vitest";
import {
  deliverNotifications,
  type NotificationRequestBody,
  returnPayoutAt,
  takeNotificationsAt,
} from "../support/adyen-stand-in/stand-in.ts";
import { TestClock } from "../support/clock.ts";
import { ACQUIRER, ADYEN_STAND_IN_URL, type TestServer } from "../support/server.ts";
import { clientFor, createMerchant, creditAvailable, fundedMerchant, json, useServer } from "./fixtures.ts";

// Cashouts (spec/resources/cashouts.tsp) through the typed client. Funds leave `available` at creation, in
// the same transaction, never past zero (also with 100 at once); a failed or canceled cashout returns them;
// destinations are validated by kind and only ever shown masked.

const US_ACCOUNT = "000123456789";
const usDestination = (account = US_ACCOUNT) => ({
  type: "us_bank_account" as const,
  routing_number: "110000000",
  account_number: account,
  account_holder: "Acme Coffee Roasters Inc.",
});

// Under Adyen (test/vitest.adyen.config.ts) a cashout's outcome comes by Adyen's notification and only an
// IBAN with its holder's identity can be paid (docs/going-live-with-adyen.md "Cashouts"): the suite below
// asserts the simulated rail's own behaviour (its magic destinations, paid at once), so it runs on the
// simulator only; "cashouts through Adyen" at the end is the same money through Adyen's payout API.
describe.skipIf(ACQUIRER === "adyen")("cashouts", () => {
  const { server, client } = useServer();

  const balanceOf = async (merchantId: string) =>
    (await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: merchantId } } })).data?.balances;

  async function eventsOf(cashoutId: string) {
    const page = await client.GET("/v1/events", { params: { query: { limit: 100 } } });
    return (page.data?.data ?? []).filter((e) => "cashout_id" in e && e.cashout_id === cashoutId);
  }

  /** The merchant's postings' lines (which the API does not list) add up to the balance it shows, bucket by bucket. */
  async function expectLedgerBalances(merchantId: string, currency: string) {
    const postings = await server.running.store.findAll("postings", { merchant_id: merchantId, currency }, 10_000);
    const lines = postings.flatMap((p) => p.lines);
    const balance = (await balanceOf(merchantId))?.find((b) => b.currency === currency);
    const sum = (bucket: string) =>
      lines.filter((l) => l.account === `merchant:${merchantId}:${bucket}`).reduce((s, l) => s + l.amount, 0);
    expect(sum("available")).toBe(balance?.available);
    expect(sum("pending")).toBe(balance?.pending);
    expect(balance?.available).toBeGreaterThanOrEqual(0);
  }

  it("creates a cashout (201): the amount leaves available at once, the account is shown masked, cashout.created", async () => {
    const merchant = await fundedMerchant(client, 1000);
    const res = await client.POST("/v1/cashouts", {
      body: {
        merchant_id: merchant.id,
        amount: 300,
        currency: "USD",
        destination: usDestination(),
        description: "Payout",
      },
    });
    expect(res.response.status).toBe(201);
    expect(res.data?.id).toMatch(/^co_[0-9A-Za-z]{24}$/);
    expect(res.data).toMatchObject({
      object: "cashout",
      merchant_id: merchant.id,
      amount: 300,
      currency: "USD",
      status: "pending",
      destination: {
        type: "us_bank_account",
        masked: "********6789",
        last4: "6789",
        routing_number: "110000000",
        account_type: "checking",
        account_holder: "Acme Coffee Roasters Inc.",
      },
      failure_code: null,
      description: "Payout",
      livemode: false,
    });
    expect(JSON.stringify(res.data)).not.toContain(US_ACCOUNT);
    expect(await balanceOf(merchant.id)).toEqual([{ currency: "USD", available: 700, pending: 0 }]);
    expect((await eventsOf(res.data?.id ?? "")).map((e) => e.type)).toEqual(["cashout.reconciled", "cashout.created"]);
    const got = await client.GET("/v1/cashouts/{id}", { params: { path: { id: res.data?.id ?? "" } } });
    expect(got.data).toEqual(res.data);
    await expectLedgerBalances(merchant.id, "USD");
  });

  it("refuses a cashout the available balance does not cover (422), writing nothing", async () => {
    const merchant = await fundedMerchant(client, 1000);
    const res = await client.POST("/v1/cashouts", {
      body: { merchant_id: merchant.id, amount: 1001, currency: "USD", destination: usDestination() },
    });
    expect(res.response.status).toBe(422);
    expect(res.error).toMatchObject({ code: "insufficient_balance", param: "amount" });
    const none = await client.GET("/v1/cashouts", { params: { query: { merchant_id: merchant.id } } });
    expect(none.data?.data).toEqual([]);
    expect(await balanceOf(merchant.id)).toEqual([{ currency: "USD", available: 1000, pending: 0 }]);
    // A currency the merchant never held: nothing to cash out, and no empty balance appears.
    const eur = await client.POST("/v1/cashouts", {
      body: {
        merchant_id: merchant.id,
        amount: 1,
        currency: "EUR",
        destination: { type: "iban", iban: "DE89370400440532013000", account_holder: "Acme" },
      },
    });
    expect(eur.response.status).toBe(422);
    expect(await balanceOf(merchant.id)).toEqual([{ currency: "USD", available: 1000, pending: 0 }]);
  });

  it("100 concurrent cashouts of 100 against 1,000 available: exactly 10 succeed, none 5xx, the ledger balances", async () => {
    const merchant = await fundedMerchant(client, 1000);
    const results = await Promise.all(
      Array.from({ length: 100 }, () =>
        client.POST("/v1/cashouts", {
          body: { merchant_id: merchant.id, amount: 100, currency: "USD", destination: usDestination() },
        }),
      ),
    );
    const statuses = results.map((r) => r.response.status);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 422)).toHaveLength(90);
    expect(await balanceOf(merchant.id)).toEqual([{ currency: "USD", available: 0, pending: 0 }]);
    const listed = await client.GET("/v1/cashouts", { params: { query: { merchant_id: merchant.id, limit: 100 } } });
    expect(listed.data?.data).toHaveLength(10);
    await expectLedgerBalances(merchant.id, "USD");
  });

  it("cancels a pending cashout once: the funds come back, cashout.canceled; a second cancel is a 409", async () => {
    const merchant = await fundedMerchant(client, 1000);
    const created = await client.POST("/v1/cashouts", {
      body: { merchant_id: merchant.id, amount: 400, currency: "USD", destination: usDestination() },
    });
    const id = created.data?.id ?? "";
    const canceled = await client.POST("/v1/cashouts/{id}/cancel", { params: { path: { id } } });
    expect(canceled.data).toMatchObject({ status: "canceled" });
    expect(await balanceOf(merchant.id)).toEqual([{ currency: "USD", available: 1000, pending: 0 }]);
    const again = await client.POST("/v1/cashouts/{id}/cancel", { params: { path: { id } } });
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ code: "invalid_state_transition" });
    expect(await balanceOf(merchant.id)).toEqual([{ currency: "USD", available: 1000, pending: 0 }]);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual([
      "cashout.canceled",
      "cashout.reconciled",
      "cashout.created",
    ]);
    await expectLedgerBalances(merchant.id, "USD");
  });

  it("sandbox: pays a cashout (cashout.paid, no money moves) and then it cannot be canceled", async () => {
    const merchant = await fundedMerchant(client, 1000);
    const created = await client.POST("/v1/cashouts", {
      body: { merchant_id: merchant.id, amount: 250, currency: "USD", destination: usDestination() },
    });
    const id = created.data?.id ?? "";
    const paid = await client.POST("/v1/sandbox/cashouts/{id}/pay", { params: { path: { id } } });
    expect(paid.data).toMatchObject({ status: "paid", failure_code: null });
    expect(await balanceOf(merchant.id)).toEqual([{ currency: "USD", available: 750, pending: 0 }]);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(["cashout.paid", "cashout.reconciled", "cashout.created"]);
    const cancel = await client.POST("/v1/cashouts/{id}/cancel", { params: { path: { id } } });
    expect(cancel.response.status).toBe(409);
    const payAgain = await client.POST("/v1/sandbox/cashouts/{id}/pay", { params: { path: { id } } });
    expect(payAgain.response.status).toBe(409);
  });

  it("a magic failing destination fails when paid: failure_code, funds returned, cashout.failed", async () => {
    const merchant = await fundedMerchant(client, 5000, "EUR");
    const created = await client.POST("/v1/cashouts", {
      body: {
        merchant_id: merchant.id,
        amount: 5000,
        currency: "EUR",
        destination: { type: "iban", iban: "DE41 3704 0044 0000 0000 01", account_holder: "Acme GmbH" },
      },
    });
    expect(created.data?.destination).toMatchObject({
      type: "iban",
      masked: "DE41 **** **** **** **00 01",
      country: "DE",
    });
    expect(await balanceOf(merchant.id)).toEqual([{ currency: "EUR", available: 0, pending: 0 }]);
    const id = created.data?.id ?? "";
    const result = await client.POST("/v1/sandbox/cashouts/{id}/pay", { params: { path: { id } } });
    expect(result.data).toMatchObject({
      status: "failed",
      failure_code: "account_closed",
      failure_message: "The destination account is closed.",
    });
    expect(await balanceOf(merchant.id)).toEqual([{ currency: "EUR", available: 5000, pending: 0 }]);
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(["cashout.failed", "cashout.reconciled", "cashout.created"]);
    expect(events[0]).toMatchObject({ failure_code: "account_closed", amount: 5000, destination_type: "iban" });
    await expectLedgerBalances(merchant.id, "EUR");
  });

  it("sandbox: fails a cashout with a chosen code; its funds come back once", async () => {
    const merchant = await fundedMerchant(client, 15_000, "BRL");
    const created = await client.POST("/v1/cashouts", {
      body: {
        merchant_id: merchant.id,
        amount: 10_000,
        currency: "BRL",
        destination: { type: "pix", key: "123.456.789-09" },
      },
    });
    expect(created.data?.destination).toMatchObject({ type: "pix", key_type: "cpf", masked: "***.456.789-**" });
    const id = created.data?.id ?? "";
    const failed = await client.POST("/v1/sandbox/cashouts/{id}/fail", {
      params: { path: { id } },
      body: { failure_code: "no_account" },
    });
    expect(failed.data).toMatchObject({ status: "failed", failure_code: "no_account" });
    expect(await balanceOf(merchant.id)).toEqual([{ currency: "BRL", available: 15_000, pending: 0 }]);
    const twice = await client.POST("/v1/sandbox/cashouts/{id}/fail", { params: { path: { id } }, body: {} });
    expect(twice.response.status).toBe(409);
    expect(await balanceOf(merchant.id)).toEqual([{ currency: "BRL", available: 15_000, pending: 0 }]);
  });

  it("validates each kind of destination, naming the field, without echoing the account", async () => {
    const merchant = await fundedMerchant(client, 1000);
    const cases: [Record<string, unknown>, string, string][] = [
      [{ type: "iban", iban: "DE88 3704 0044 0532 0130 00", account_holder: "A" }, "EUR", "destination.iban"],
      [{ type: "iban", iban: "XX89 3704 0044 0532 0130 00", account_holder: "A" }, "EUR", "destination.iban"],
      [usDestination("12"), "USD", "destination.account_number"],
      [{ ...usDestination(), routing_number: "110000001" }, "USD", "destination.routing_number"],
      [{ type: "pix", key: "123.456.789-00" }, "BRL", "destination.key"],
      [{ type: "pix", key: "ana@example.com", key_type: "cpf" }, "BRL", "destination.key_type"],
      [{ type: "clabe", clabe: "002010077777777772", account_holder: "A" }, "MXN", "destination.clabe"],
      [{ type: "pix", key: "ana@example.com" }, "USD", "currency"],
      [usDestination(), "EUR", "currency"],
    ];
    for (const [destination, currency, param] of cases) {
      const res = await fetch(`${server.url}/v1/cashouts`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.sandboxKey}`, "content-type": "application/json" },
        body: JSON.stringify({ merchant_id: merchant.id, amount: 100, currency, destination }),
      });
      const body = await json(res);
      expect(res.status, JSON.stringify(destination)).toBe(400);
      expect(body, JSON.stringify(destination)).toMatchObject({ code: "invalid_request", param });
      const account = Object.values(destination).find((v) => typeof v === "string" && /[0-9]{6}/.test(v));
      if (typeof account === "string") expect(JSON.stringify(body)).not.toContain(account.replace(/ /g, ""));
    }
    expect(await balanceOf(merchant.id)).toEqual([{ currency: "USD", available: 1000, pending: 0 }]);
  });

  it("lists cashouts newest first, by merchant and status", async () => {
    const merchant = await fundedMerchant(client, 1000);
    const make = async () =>
      (
        await client.POST("/v1/cashouts", {
          body: { merchant_id: merchant.id, amount: 100, currency: "USD", destination: usDestination() },
        })
      ).data?.id ?? "";
    const a = await make();
    const b = await make();
    await client.POST("/v1/cashouts/{id}/cancel", { params: { path: { id: a } } });
    const all = await client.GET("/v1/cashouts", { params: { query: { merchant_id: merchant.id } } });
    expect(all.data?.data.map((c) => c.id)).toEqual([b, a]);
    const pending = await client.GET("/v1/cashouts", {
      params: { query: { merchant_id: merchant.id, status: "pending" } },
    });
    expect(pending.data?.data.map((c) => c.id)).toEqual([b]);
  });

  it("needs an active merchant; the sandbox helpers answer 404 in production", async () => {
    const merchant = await fundedMerchant(client, 1000);
    await client.PATCH("/v1/merchants/{id}", { params: { path: { id: merchant.id } }, body: { status: "suspended" } });
    const refused = await client.POST("/v1/cashouts", {
      body: { merchant_id: merchant.id, amount: 100, currency: "USD", destination: usDestination() },
    });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ code: "merchant_inactive" });

    const live = clientFor(server, await server.key(["*"], { live: true }));
    const liveMerchant = await createMerchant(live);
    // Production captures settle later: put funds straight into available for this test.
    await creditAvailable(server, liveMerchant, 500);
    const liveCashout = await live.POST("/v1/cashouts", {
      body: { merchant_id: liveMerchant.id, amount: 500, currency: "USD", destination: usDestination() },
    });
    expect(liveCashout.response.status).toBe(201);
    const id = liveCashout.data?.id ?? "";
    const pay = await live.POST("/v1/sandbox/cashouts/{id}/pay", { params: { path: { id } } });
    expect(pay.response.status).toBe(404);
    const fail = await live.POST("/v1/sandbox/cashouts/{id}/fail", { params: { path: { id } }, body: {} });
    expect(fail.response.status).toBe(404);
    // The payout job moves it instead, on its schedule (here CASHOUT_PENDING_SECONDS is its default, an hour).
    expect(await server.running.domain.jobs.payouts()).toBe(0);
    const stillPending = await live.GET("/v1/cashouts/{id}", { params: { path: { id } } });
    expect(stillPending.data?.status).toBe("pending");
  });
});

// On the simulated rail only, as the suite above (under Adyen every cashout is refused at creation).
describe.skipIf(ACQUIRER === "adyen")("the payout job in production", () => {
  const clock = new TestClock();
  // The payout job runs only when the test calls it.
  const { server } = useServer(
    { CASHOUT_PENDING_SECONDS: "0", CASHOUT_TRANSIT_SECONDS: "60", JOBS_INTERVAL_SECONDS: "3600" },
    { clock },
  );

  it("sends a pending cashout once its pending time is over, and records the rail's answer after the transit time", async () => {
    const live = clientFor(server, await server.key(["*"], { live: true }));
    const merchant = await createMerchant(live);
    await creditAvailable(server, merchant, 300);
    const make = async (account: string) =>
      (
        await live.POST("/v1/cashouts", {
          body: { merchant_id: merchant.id, amount: 100, currency: "USD", destination: usDestination(account) },
        })
      ).data?.id ?? "";
    const ok = await make(US_ACCOUNT);
    const closed = await make("000111111113"); // magic: account_closed
    expect(await server.running.domain.jobs.payouts()).toBe(2);
    const status = async (id: string) => (await live.GET("/v1/cashouts/{id}", { params: { path: { id } } })).data;
    expect((await status(ok))?.status).toBe("in_transit");
    // The transit time must pass before the job asks the rail again.
    clock.advance(59_999);
    expect(await server.running.domain.jobs.payouts()).toBe(0);
    expect((await status(ok))?.status).toBe("in_transit");
    clock.advance(1);
    expect(await server.running.domain.jobs.payouts()).toBe(2);
    expect(await status(ok)).toMatchObject({ status: "paid" });
    expect(await status(closed)).toMatchObject({ status: "failed", failure_code: "account_closed" });
    const balance = await live.GET("/v1/merchants/{id}/balance", { params: { path: { id: merchant.id } } });
    expect(balance.data?.balances).toEqual([{ currency: "USD", available: 200, pending: 0 }]);
  });
});

// A file-backed server, its data files and its whole log read: longer than vitest's default limit
// allows on a busy machine.
describe("account numbers at rest and in logs", { timeout: 90_000 }, () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("stores destinations sealed and logs no account number", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "payments-cashouts-at-rest-"));
    dirs.push(dataDir);
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const running = await startServer({
      config: loadConfig({
        NODE_ENV: "development",
        PORT: "0",
        DATA_DIR: dataDir,
        LOG_LEVEL: "debug",
        PRODUCTION_ACQUIRER: "simulator",
      }),
      logger: createLogger("debug", stream),
    });
    const account = "987654321012";
    const clabe = "002010077777777771";
    try {
      const c = clientFor({ url: running.url } as TestServer, running.bootstrapSecret ?? "");
      const usd = await fundedMerchant(c, 1000);
      const mxn = await fundedMerchant(c, 1000, "MXN");
      const first = await c.POST("/v1/cashouts", {
        body: { merchant_id: usd.id, amount: 100, currency: "USD", destination: usDestination(account) },
      });
      expect(first.response.status).toBe(201);
      const second = await c.POST("/v1/cashouts", {
        body: {
          merchant_id: mxn.id,
          amount: 100,
          currency: "MXN",
          destination: { type: "clabe", clabe, account_holder: "Taquería" },
        },
      });
      expect(second.data?.destination).toMatchObject({ masked: "002***********7771", bank_code: "002" });
      // The payout rail still gets the whole account: the sealed destination opens.
      const paid = await c.POST("/v1/sandbox/cashouts/{id}/pay", { params: { path: { id: first.data?.id ?? "" } } });
      expect(paid.data?.status).toBe("paid");
    } finally {
      await running.close();
    }
    for (const file of readdirSync(dataDir)) {
      const bytes = readFileSync(join(dataDir, file)).toString("latin1");
      expect(bytes.includes(account), file).toBe(false);
      expect(bytes.includes(clabe), file).toBe(false);
    }
    const log = lines.join("");
    expect(log).toContain("/v1/cashouts");
    expect(log).not.toContain(account);
    expect(log).not.toContain(clabe);
  });
});

describe.runIf(ACQUIRER === "adyen")("cashouts through Adyen", () => {
  const { server, client } = useServer();
  const standIn = ADYEN_STAND_IN_URL ?? "";
  const HOLDER = {
    entity_type: "company" as const,
    email: "finance@acme.example",
    nationality: "DE",
    date_of_birth: "1990-01-01",
  };
  // The stand-in's outcomes by owner name (adyen-stand-in/stand-in.ts "Payouts"); any other name is paid.
  const iban = (account_holder = "Acme Coffee Roasters GmbH") => ({
    type: "iban" as const,
    iban: "DE89370400440532013000",
    account_holder,
    holder: HOLDER,
  });
  const NOTIFICATIONS = () => `${server.url}/v1/acquirers/adyen/notifications`;

  it("refuses a cashout Adyen cannot pay at creation, with a 400 naming the field, debiting nothing", async () => {
    const merchant = await fundedMerchant(client, 1000);
    const before = await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: merchant.id } } });
    const { holder: _, ...withoutHolder } = iban();
    for (const [destination, param] of [
      [usDestination(), "destination.type"],
      [withoutHolder, "destination.holder"],
    ] as const) {
      const res = await client.POST("/v1/cashouts", {
        body: {
          merchant_id: merchant.id,
          amount: 300,
          currency: destination.type === "iban" ? "EUR" : "USD",
          destination,
        },
      });
      expect(res.response.status).toBe(400);
      expect(res.error).toMatchObject({ code: "invalid_request", param });
    }
    const after = await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: merchant.id } } });
    expect(after.data).toEqual(before.data);
  });

  it("pays, declines, expires and returns payouts by Adyen's notifications, each delivered twice and shuffled, applied once", async () => {
    const merchant = await createMerchant(client);
    await creditAvailable(server, merchant, 4000, "EUR");
    const make = async (owner?: string) => {
      const res = await client.POST("/v1/cashouts", {
        body: { merchant_id: merchant.id, amount: 1000, currency: "EUR", destination: iban(owner) },
      });
      expect(res.response.status).toBe(201);
      // The holder's identity is sent to Adyen, never shown.
      expect(JSON.stringify(res.data)).not.toContain(HOLDER.email);
      return res.data?.id ?? "";
    };
    const paid = await make();
    const declined = await make("PAYOUT_DECLINE");
    const expired = await make("PAYOUT_EXPIRE");
    const returned = await make();
    const ids = [paid, declined, expired, returned];
    // Sent to Adyen (submitted and confirmed): in transit until Adyen's notification says what became of it.
    for (const id of ids) {
      const sent = await client.POST("/v1/sandbox/cashouts/{id}/pay", { params: { path: { id } } });
      expect(sent.data?.status, id).toBe("in_transit");
    }
    const status = async (id: string) => (await client.GET("/v1/cashouts/{id}", { params: { path: { id } } })).data;
    const deliver = async (bodies: NotificationRequestBody[], seed: number) => {
      const answers = await deliverNotifications(NOTIFICATIONS(), bodies, { times: 2, seed });
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    };
    const outcomes = (await Promise.all(ids.map((id) => takeNotificationsAt(standIn, id)))).flat();
    expect(outcomes.map((b) => b.notificationItems[0]?.NotificationRequestItem.eventCode).sort()).toEqual([
      "PAYOUT_DECLINE",
      "PAYOUT_EXPIRE",
      "PAYOUT_THIRDPARTY",
      "PAYOUT_THIRDPARTY",
    ]);
    await deliver(outcomes, 32);
    expect(await status(paid)).toMatchObject({ status: "paid" });
    expect(await status(returned)).toMatchObject({ status: "paid" });
    expect(await status(declined)).toMatchObject({ status: "failed", failure_code: "declined" });
    expect(await status(expired)).toMatchObject({ status: "failed", failure_code: "could_not_process" });

    // The destination's bank sends a paid payout back (PAIDOUT_REVERSED); delivered twice with a late copy of its payment.
    await returnPayoutAt(standIn, returned, "Account closed");
    await deliver([...(await takeNotificationsAt(standIn, returned)), ...outcomes.slice(0, 1)], 7);
    expect(await status(returned)).toMatchObject({ status: "failed", failure_code: "account_closed" });
    expect(await status(paid)).toMatchObject({ status: "paid" });

    // Only the paid cashout's money left; the three others came back to available, once each.
    const balance = await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: merchant.id } } });
    expect(balance.data?.balances).toEqual([{ currency: "EUR", available: 3000, pending: 0 }]);
    const events = await client.GET("/v1/events", { params: { query: { limit: 100 } } });
    const of = (type: string) =>
      (events.data?.data ?? []).filter((e) => e.type === type && "cashout_id" in e && ids.includes(e.cashout_id));
    expect(of("cashout.paid")).toHaveLength(2);
    expect(of("cashout.failed")).toHaveLength(3);
  });
  it("ends a payout Adyen refuses as failed, its amount back once: a refused submission, and a refused confirmation (declined)", async () => {
    const merchant = await createMerchant(client);
    await creditAvailable(server, merchant, 2000, "EUR");
    const make = async (owner: string) => {
      const res = await client.POST("/v1/cashouts", {
        body: { merchant_id: merchant.id, amount: 700, currency: "EUR", destination: iban(owner) },
      });
      expect(res.response.status).toBe(201);
      return res.data?.id ?? "";
    };
    // The stand-in's refusals by owner name (adyen-stand-in/stand-in.ts "Payouts").
    const submission = await make("PAYOUT_REFUSED Acme GmbH");
    const confirmation = await make("CONFIRM_REFUSED Acme GmbH");
    const balance = async () =>
      (await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: merchant.id } } })).data?.balances;
    expect(await balance()).toEqual([{ currency: "EUR", available: 600, pending: 0 }]);
    for (const [id, shown] of [
      [submission, /^The acquirer refused the payout \(HTTP 422, Adyen error 161\); nothing was paid/],
      [confirmation, /^The acquirer refused the payout's confirmation \(HTTP 422, Adyen error 010\); nothing was paid/],
    ] as const) {
      const sent = await client.POST("/v1/sandbox/cashouts/{id}/pay", { params: { path: { id } } });
      expect(sent.response.status, id).toBe(200);
      expect(sent.data).toMatchObject({ status: "failed", failure_code: "could_not_process" });
      expect(sent.data?.failure_message).toMatch(shown);
      // Final: never sent again, never credited twice.
      const again = await client.POST("/v1/sandbox/cashouts/{id}/pay", { params: { path: { id } } });
      expect(again.response.status).toBe(409);
    }
    expect(await balance()).toEqual([{ currency: "EUR", available: 2000, pending: 0 }]);
    // Adyen's PAYOUT_DECLINE for the declined submission, delivered twice and shuffled, changes nothing.
    const late = await takeNotificationsAt(standIn, confirmation);
    expect(late.map((b) => b.notificationItems[0]?.NotificationRequestItem.eventCode)).toEqual(["PAYOUT_DECLINE"]);
    expect(await takeNotificationsAt(standIn, submission)).toEqual([]);
    const answers = await deliverNotifications(NOTIFICATIONS(), late, { times: 2, seed: 11 });
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(await balance()).toEqual([{ currency: "EUR", available: 2000, pending: 0 }]);
    const events = await client.GET("/v1/events", { params: { query: { limit: 100 } } });
    const failed = (events.data?.data ?? []).filter(
      (e) => e.type === "cashout.failed" && "cashout_id" in e && [submission, confirmation].includes(e.cashout_id),
    );
    expect(failed).toHaveLength(2);
    // Each cashout's amount came back by one balanced posting (creditAvailable has none: no full verify).
    const postings = await server.running.store.findAll("postings", { merchant_id: merchant.id }, 1000);
    for (const id of [submission, confirmation]) {
      const mine = postings.filter((p) => p.source_id === id).flatMap((p) => p.lines);
      const merchantLines = mine.filter((l) => l.account.startsWith("merchant:"));
      expect(
        merchantLines.reduce((sum, l) => sum + l.amount, 0),
        id,
      ).toBe(0);
    }
  });
});
