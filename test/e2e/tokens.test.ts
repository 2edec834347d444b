import type { PaymentsClient } from "@payments/client";
import { beforeAll, describe, expect, it } from "vitest";
import { auditRecordsOf, cardBody, clientFor, createToken, MASTERCARD, useServer, VISA } from "./fixtures.ts";

describe("tokens (the vault)", () => {
  const { server } = useServer();
  let tokenization: PaymentsClient;
  let vault: PaymentsClient;
  beforeAll(async () => {
    tokenization = clientFor(server, await server.key(["tokenization"]));
    vault = clientFor(server, await server.key(["vault"]));
  });

  it("tokenizes a card with 200 (fixed by createToken), showing only brand, first four, last four", async () => {
    const { data, response } = await tokenization.POST("/v1/tokens", {
      body: { card: "4242 4242 4242 4242", holder: "Ada Lovelace", exp_month: 12, exp_year: 2031, cvc: "123" },
    });
    expect(response.status).toBe(200);
    expect(data?.id).toMatch(/^tok_[0-9A-Za-z]{24}$/);
    expect(data?.card).toMatchObject({ brand: "visa", first4: "4242", last4: "4242", exp_month: 12, exp_year: 2031 });
    expect(data?.card.fingerprint).toMatch(/^fp_[0-9a-f]{32}$/);
    expect(JSON.stringify(data)).not.toContain(VISA);
    expect(JSON.stringify(data)).not.toContain("cvc");
  });

  it("detects brands and gives the same card the same fingerprint", async () => {
    const a = await createToken(tokenization, MASTERCARD);
    const b = await createToken(tokenization, MASTERCARD);
    const c = await createToken(tokenization, VISA);
    expect(a.card.brand).toBe("mastercard");
    expect(a.card.fingerprint).toBe(b.card.fingerprint);
    expect(a.card.fingerprint).not.toBe(c.card.fingerprint);
    expect(a.id).not.toBe(b.id);
  });

  it("refuses bad cards with a 400 naming the field, never echoing the number", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ card: "4242424242424241" }, "card"], // Luhn
      [{ card: "4242-4242-abcd-4242" }, "card"],
      [{ exp_year: 2020 }, "exp_year"],
      [{ exp_month: 13 }, "exp_month"],
      [{ cvc: "12" }, "cvc"],
      [{ holder: "" }, "holder"],
    ];
    for (const [patch, param] of cases) {
      const res = await tokenization.POST("/v1/tokens", { body: { ...cardBody(), ...patch } as never });
      expect(res.response.status, JSON.stringify(patch)).toBe(400);
      expect(res.error?.param, JSON.stringify(res.error)).toBe(param);
      expect(JSON.stringify(res.error)).not.toMatch(/4242424242424241|42424242abcd/);
    }
    const luhn = await tokenization.POST("/v1/tokens", { body: cardBody("4242424242424241") });
    expect(luhn.error).toMatchObject({ code: "invalid_card" });
    expect(luhn.error?.detail).toContain("4242********4241");
  });

  it("gets, reveals (audited) and deletes with a vault key; tokenization keys cannot", async () => {
    const token = await createToken(tokenization);
    const path = { id: token.id };
    expect((await tokenization.GET("/v1/tokens/{id}", { params: { path } })).response.status).toBe(403);
    expect((await tokenization.POST("/v1/tokens/{id}/reveal", { params: { path } })).response.status).toBe(403);

    const got = await vault.GET("/v1/tokens/{id}", { params: { path } });
    expect(got.data).toEqual(token);

    const revealed = await vault.POST("/v1/tokens/{id}/reveal", { params: { path } });
    expect(revealed.data).toMatchObject({ id: token.id, object: "token_reveal", card: { number: VISA } });
    const audit = await auditRecordsOf(server, token.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: "token.reveal", request_id: revealed.response.headers.get("request-id") });

    // A reveal's answer holds the card number, so it is never stored for replay: a retry with the same
    // Idempotency-Key is told so (409 naming the token) and reveals nothing, and is not audited again.
    const headers = { "Idempotency-Key": "reveal-1" };
    expect((await vault.POST("/v1/tokens/{id}/reveal", { params: { path, header: headers } })).data?.card.number).toBe(
      VISA,
    );
    const again = await vault.POST("/v1/tokens/{id}/reveal", { params: { path, header: headers } });
    expect(again.response.status).toBe(409);
    expect(again.response.headers.get("idempotent-replayed")).toBeNull(); // nothing is replayed
    expect(again.error).toMatchObject({ code: "idempotency_replay_unavailable", param: "Idempotency-Key" });
    expect(again.error?.detail).toContain(token.id);
    expect(JSON.stringify(again.error)).not.toContain(VISA);
    expect(await auditRecordsOf(server, token.id)).toHaveLength(2);
    expect(JSON.stringify(await server.running.store.findAll("idempotency", {}))).not.toContain(VISA);

    const deleted = await vault.DELETE("/v1/tokens/{id}", { params: { path } });
    expect(deleted.data).toEqual({ id: token.id, object: "token", deleted: true });
    const stored = await server.running.store.get("tokens", token.id);
    expect(stored?.sealed).toBeNull(); // data key and ciphertext erased: unrecoverable
    expect((await vault.GET("/v1/tokens/{id}", { params: { path } })).response.status).toBe(404);
    expect((await vault.POST("/v1/tokens/{id}/reveal", { params: { path } })).response.status).toBe(404);
    expect((await vault.DELETE("/v1/tokens/{id}", { params: { path } })).response.status).toBe(404);
  });
});
