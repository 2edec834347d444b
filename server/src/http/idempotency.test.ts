import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type NextFunction, type Request, type Response } from "express";
import { pino } from "pino";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { type AppStore, COLLECTIONS, type Docs } from "../domain/areas.ts";
import type { Caller } from "../domain/kernel/caller.ts";
import { commit, type IdempotencyScope } from "../domain/kernel/commit.ts";
import { newId } from "../domain/kernel/ids.ts";
import { createdAt } from "../domain/kernel/time.ts";
import type { MerchantDoc } from "../domain/merchants/records.ts";
import { MERCHANT_MACHINE } from "../domain/merchants/state.ts";
import { openSqliteStore } from "../store/sqlite.ts";
import { errorMiddleware } from "./errors.ts";
import { idempotency, recordId } from "./idempotency.ts";

// The idempotency middleware against the in-memory store, over real HTTP on loopback. The use case here
// is a minimal one that inserts a merchant through commit(), as every real use case does; `crash`
// tells the handler to drop the connection at a chosen moment, the way a kill -9 would leave it.

type CrashPoint = "none" | "before_commit" | "after_commit";

const silent = pino({ level: "silent" });
/** Error lines the middleware logged (it logs one when an answer is stored after its change, not with it). */
const logged: string[] = [];
const watching = pino({ level: "error" }, { write: (line: string) => logged.push(line) });
let store: AppStore;
let server: Server;
let url: string;
let clock = new Date("2026-11-22T10:00:00Z");
/** Set by a test to hold the use case until released, so a second request can arrive meanwhile. */
let gate: Promise<void> | null = null;

let racedRuns = 0;
function app() {
  const a = express();
  a.use(express.json());
  a.use((req: Request, res: Response, next: NextFunction) => {
    res.locals.requestId = newId("req");
    const caller: Caller = {
      keyId: "kid_test",
      livemode: req.get("x-live") === "1",
      scopes: ["*"],
      keyPrefix: "key_test_abcd",
      requestId: res.locals.requestId,
    };
    res.locals.caller = caller;
    next();
  });
  const options = { store, now: () => clock, ttlSeconds: 3600, lockSeconds: 60, logger: watching };
  const handler = (sensitive: boolean) => async (req: Request, res: Response) => {
    const crash = (req.get("x-crash") ?? "none") as CrashPoint;
    if (crash === "before_commit") return req.socket.destroy();
    const scope = res.locals.idempotency as IdempotencyScope | undefined;
    const toReply = (m: unknown) => ({ status: 201, body: sensitive ? { ...(m as object), secret: "s3cr3t" } : m });
    const caller: Caller = { ...(res.locals.caller as Caller), outcome: scope?.recorder(toReply) };
    if (gate) await gate;
    const at = createdAt(clock);
    const merchant: MerchantDoc = {
      id: newId("mch"),
      livemode: caller.livemode,
      created_at: at,
      updated_at: at,
      name: String(req.body.name),
      status: MERCHANT_MACHINE.start("active"),
      metadata: {},
    };
    const created = await commit(store, caller, async (tx) => {
      await tx.insert("merchants", merchant);
      return merchant;
    });
    if (crash === "after_commit") return req.socket.destroy();
    if (req.body.refuse) {
      res
        .status(409)
        .type("application/problem+json")
        .send(JSON.stringify({ code: "conflict" }));
      return;
    }
    const reply = toReply(created);
    res.status(reply.status).json(reply.body);
  };
  const wrap = (h: ReturnType<typeof handler>) => (req: Request, res: Response, next: NextFunction) =>
    h(req, res).catch(next);
  a.post("/things", idempotency(options, { sensitive: false }), wrap(handler(false)));
  a.post("/secrets", idempotency(options, { sensitive: true }), wrap(handler(true)));
  a.post("/secret-refusal", idempotency(options, { sensitive: true }), (_req: Request, res: Response) => {
    // A sensitive operation's refusal carries no secret: stored and replayed like any refusal.
    res.status(409).type("application/problem+json").send('{"code":"invalid_state_transition"}');
  });
  a.post("/raced", idempotency(options, { sensitive: false }), (_req: Request, res: Response) => {
    // A race with another request (domain/charges/intents.ts `conflict`): nothing changed; "retry".
    racedRuns++;
    res.status(409).type("application/problem+json").send('{"code":"conflict"}');
  });
  a.post("/secret-without-id", idempotency(options, { sensitive: true }), async (_req: Request, res: Response) => {
    const scope = res.locals.idempotency as IdempotencyScope;
    const caller: Caller = {
      ...(res.locals.caller as Caller),
      outcome: scope.recorder((r) => ({ status: 200, body: r })),
    };
    const result = await commit(store, caller, async () => ({ secret: "s3cr3t", id: 42 }));
    res.status(200).json(result);
  });
  a.post("/no-commit", idempotency(options, { sensitive: false }), (_req: Request, res: Response) => {
    res.status(201).json({ made: "without commit()" });
  });
  a.post("/plain", idempotency(options, { sensitive: false }), (req: Request, res: Response) => {
    // A handler that changes nothing and answers without a transaction: stored after the answer.
    res
      .status(req.body.fail ? 500 : 422)
      .type("application/problem+json")
      .send('{"code":"refused"}');
  });
  a.use(errorMiddleware(silent));
  return a;
}

async function listen() {
  if (server) await new Promise((r) => server.close(r));
  server = await new Promise<Server>((resolve) => {
    const s = app().listen(0, "127.0.0.1", () => resolve(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterAll(async () => {
  await new Promise((r) => server.close(r));
  await store.close();
});
beforeEach(async () => {
  await store?.close();
  store = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
  clock = new Date("2026-11-22T10:00:00Z");
  gate = null;
  logged.length = 0;
  await listen();
});

async function post(
  key: string,
  body: Record<string, unknown>,
  options: { crash?: CrashPoint; path?: string; live?: boolean } = {},
) {
  const headers: Record<string, string> = { "content-type": "application/json", "idempotency-key": key };
  if (options.crash) headers["x-crash"] = options.crash;
  if (options.live) headers["x-live"] = "1";
  try {
    const res = await fetch(`${url}${options.path ?? "/things"}`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
    });
    return { status: res.status, text: await res.text(), replayed: res.headers.get("idempotent-replayed"), res };
  } catch {
    return null; // the connection was dropped: no answer
  }
}

const merchants = async (name: string) => (await store.findAll("merchants", {})).filter((m) => m.name === name);
const advance = (seconds: number) => {
  clock = new Date(clock.getTime() + seconds * 1000);
};

describe("idempotency middleware", () => {
  it("claims the key, then replays the first answer byte for byte with the same content type", async () => {
    const first = await post("k1", { name: "A" });
    const second = await post("k1", { name: "A" });
    expect(first?.status).toBe(201);
    expect(second?.status).toBe(201);
    expect(second?.text).toBe(first?.text);
    expect(second?.replayed).toBe("true");
    expect(first?.replayed).toBeNull();
    expect(second?.res.headers.get("content-type")).toBe(first?.res.headers.get("content-type"));
    expect(await merchants("A")).toHaveLength(1);
  });

  it("refuses the same key with another body or another path (422), and keeps keys per environment", async () => {
    await post("k2", { name: "B" });
    const other = await post("k2", { name: "C" });
    expect(other?.status).toBe(422);
    expect(JSON.parse(other?.text ?? "{}")).toMatchObject({ code: "idempotency_key_reused", param: "Idempotency-Key" });
    expect((await post("k2", { name: "B" }, { path: "/plain" }))?.status).toBe(422);
    expect(JSON.parse((await post("k2", { name: "B" }, { path: "/plain" }))?.text ?? "{}").code).toBe(
      "idempotency_key_reused",
    );
    const live = await post("k2", { name: "B" }, { live: true });
    expect(live?.status).toBe(201);
    expect(live?.replayed).toBeNull();
    expect(await merchants("B")).toHaveLength(2);
  });

  it("stores only the key's digest, never the key itself", async () => {
    const key = "4242424242424242";
    await post(key, { name: "D" });
    const records = await store.findAll("idempotency", {});
    expect(records.map((r) => r.id)).toEqual([recordId(false, key)]);
    expect(JSON.stringify(records)).not.toContain(key);
  });

  it("answers 409 while the first request is in flight", async () => {
    let release = () => {};
    gate = new Promise<void>((r) => {
      release = r;
    });
    const first = post("k3", { name: "E" });
    // Wait until the first request holds the key.
    while ((await store.findAll("idempotency", {})).length === 0) await new Promise((r) => setTimeout(r, 5));
    const busy = await post("k3", { name: "E" });
    expect(busy?.status).toBe(409);
    expect(JSON.parse(busy?.text ?? "{}").code).toBe("idempotency_request_in_progress");
    release();
    expect((await first)?.status).toBe(201);
    expect(await merchants("E")).toHaveLength(1);
  });

  it("after a crash past the commit, a retry replays what happened instead of running again", async () => {
    expect(await post("k4", { name: "F" }, { crash: "after_commit" })).toBeNull();
    const [created] = await merchants("F");
    const record = await store.get("idempotency", recordId(false, "k4"));
    expect(record).toMatchObject({ state: "done", status: 201, atomic: true });
    // Even long after the lock would have run out: the record is done, so nothing runs again.
    advance(3600 - 1);
    const retry = await post("k4", { name: "F" });
    expect(retry?.status).toBe(201);
    expect(retry?.replayed).toBe("true");
    expect(JSON.parse(retry?.text ?? "{}").id).toBe(created?.id);
    expect(await merchants("F")).toHaveLength(1);
  });

  it("after a crash before the commit, a retry waits for the lock, then takes the key over and runs once", async () => {
    expect(await post("k5", { name: "G" }, { crash: "before_commit" })).toBeNull();
    expect(await merchants("G")).toHaveLength(0);
    expect((await post("k5", { name: "G" }))?.status).toBe(409); // the owner might still be alive
    advance(61);
    const [a, b] = await Promise.all([post("k5", { name: "G" }), post("k5", { name: "G" })]);
    // Exactly one retry took the key over; the other saw it in flight (409) or replayed its answer.
    const statuses = [a?.status, b?.status].sort();
    expect(statuses[1]).toBe(201);
    expect(await merchants("G")).toHaveLength(1);
  });

  it("a slow first request that lost its key to a retry is rolled back: the change happens once", async () => {
    let release = () => {};
    gate = new Promise<void>((r) => {
      release = r;
    });
    const slow = post("k6", { name: "H" });
    while ((await store.findAll("idempotency", {})).length === 0) await new Promise((r) => setTimeout(r, 5));
    advance(61); // the slow request's lock has run out: it looks dead
    gate = null;
    const retry = await post("k6", { name: "H" });
    expect(retry?.status).toBe(201);
    release();
    const late = await slow;
    expect(late?.status).toBe(409);
    expect(JSON.parse(late?.text ?? "{}").code).toBe("idempotency_request_in_progress");
    expect(await merchants("H")).toHaveLength(1);
    const replay = await post("k6", { name: "H" });
    expect(replay?.text).toBe(retry?.text);
  });

  it("never stores an answer that carries a secret: a retry gets 409 naming the object", async () => {
    const first = await post("k7", { name: "I" }, { path: "/secrets" });
    expect(JSON.parse(first?.text ?? "{}").secret).toBe("s3cr3t");
    const [created] = await merchants("I");
    const record = await store.get("idempotency", recordId(false, "k7"));
    expect(record).toMatchObject({ state: "done", withheld: true, body: null, object_id: created?.id });
    expect(JSON.stringify(record)).not.toContain("s3cr3t");
    const retry = await post("k7", { name: "I" }, { path: "/secrets" });
    expect(retry?.status).toBe(409);
    expect(retry?.replayed).toBeNull(); // nothing was replayed
    const problem = JSON.parse(retry?.text ?? "{}");
    expect(problem).toMatchObject({ code: "idempotency_replay_unavailable", param: "Idempotency-Key" });
    expect(problem.detail).toContain(created?.id);
    expect(retry?.text).not.toContain("s3cr3t");
    expect(await merchants("I")).toHaveLength(1);
  });

  it("stores refusals answered without a transaction, and forgets 5xx answers", async () => {
    const refused = await post("k8", {}, { path: "/plain" });
    expect(refused?.status).toBe(422);
    const replay = await post("k8", {}, { path: "/plain" });
    expect(replay?.status).toBe(422);
    expect(replay?.replayed).toBe("true");
    expect(replay?.res.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
    expect((await store.get("idempotency", recordId(false, "k8")))?.atomic).toBe(false);

    expect((await post("k9", { fail: true }, { path: "/plain" }))?.status).toBe(500);
    expect(await store.get("idempotency", recordId(false, "k9"))).toBeNull();
    const again = await post("k9", { fail: true }, { path: "/plain" });
    expect(again?.replayed).toBeNull();
  });

  it("keeps the committed outcome when the answer after the commit fails", async () => {
    // A refusal after the change committed (as when the processor fails after a refund) keeps the change's answer.
    const res = await post("k10", { name: "J", refuse: true });
    expect(res?.status).toBe(409);
    const replay = await post("k10", { name: "J", refuse: true });
    expect(replay?.status).toBe(201);
    expect(replay?.replayed).toBe("true");
    expect(await merchants("J")).toHaveLength(1);
  });

  it("forgets an expired key and runs the request again", async () => {
    await post("k11", { name: "K" });
    advance(3601);
    const again = await post("k11", { name: "K" });
    expect(again?.status).toBe(201);
    expect(again?.replayed).toBeNull();
    expect(await merchants("K")).toHaveLength(2);
  });

  it("keeps the environments' keys apart and stores only `<env>:<SHA-256>`", () => {
    expect(recordId(true, "k")).toMatch(/^live:[0-9a-f]{64}$/);
    expect(recordId(false, "k")).toMatch(/^test:[0-9a-f]{64}$/);
    expect(recordId(true, "k").slice(5)).toBe(recordId(false, "k").slice(5));
    expect(recordId(false, "k")).not.toBe(recordId(false, "l"));
  });

  it("passes a request without a key straight through, storing nothing", async () => {
    const res = await fetch(`${url}/things`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "L" }),
    });
    expect(res.status).toBe(201);
    expect(await store.findAll("idempotency", {})).toEqual([]);
    expect(await merchants("L")).toHaveLength(1);
  });

  it("records a committed answer with the change, and logs nothing about it afterwards", async () => {
    expect((await post("k12", { name: "M" }))?.status).toBe(201);
    expect((await store.get("idempotency", recordId(false, "k12")))?.atomic).toBe(true);
    expect(logged).toEqual([]);
    // A success answered without a transaction is stored too, but it is the mistake the log names.
    expect((await post("k12b", {}, { path: "/no-commit" }))?.status).toBe(201);
    expect((await store.get("idempotency", recordId(false, "k12b")))?.atomic).toBe(false);
    expect(logged.join("")).toContain("idempotent answer stored after its change, not with it");
  });

  it("stores a sensitive operation's refusal (it holds no secret) and replays it", async () => {
    expect((await post("k13", {}, { path: "/secret-refusal" }))?.status).toBe(409);
    const record = await store.get("idempotency", recordId(false, "k13"));
    expect(record).toMatchObject({
      state: "done",
      withheld: false,
      status: 409,
      body: '{"code":"invalid_state_transition"}',
    });
    const replay = await post("k13", {}, { path: "/secret-refusal" });
    expect(replay?.status).toBe(409);
    expect(replay?.replayed).toBe("true");
    expect(replay?.text).toBe('{"code":"invalid_state_transition"}');
  });

  it("forgets a 409 conflict (a race that says to retry), so the retry runs again instead of replaying it", async () => {
    expect((await post("k13b", {}, { path: "/raced" }))?.status).toBe(409);
    expect(await store.get("idempotency", recordId(false, "k13b"))).toBeNull();
    const retry = await post("k13b", {}, { path: "/raced" });
    expect(retry?.status).toBe(409);
    expect(retry?.replayed).not.toBe("true");
    expect(racedRuns).toBe(2);
  });

  it("withholds a secret-bearing answer without an id, naming no object", async () => {
    expect((await post("k14", {}, { path: "/secret-without-id" }))?.status).toBe(200);
    expect(await store.get("idempotency", recordId(false, "k14"))).toMatchObject({ withheld: true, object_id: null });
    const retry = await post("k14", {}, { path: "/secret-without-id" });
    expect(retry?.status).toBe(409);
    expect(retry?.text).not.toContain("s3cr3t");
  });

  it("counts a key as expired from the very moment its time to live ends", async () => {
    await post("k15", { name: "N" });
    advance(3600); // exactly the time to live
    const again = await post("k15", { name: "N" });
    expect(again?.replayed).toBeNull();
    expect(await merchants("N")).toHaveLength(2);
  });

  it("lets a retry take over exactly when the dead request's lock ends, not a moment before", async () => {
    expect(await post("k16", { name: "O" }, { crash: "before_commit" })).toBeNull();
    advance(59);
    expect((await post("k16", { name: "O" }))?.status).toBe(409);
    advance(1); // exactly the lock's 60 s
    expect((await post("k16", { name: "O" }))?.status).toBe(201);
    expect(await merchants("O")).toHaveLength(1);
  });

  it("answers a store failure while claiming as a failure, never as someone else's key", async () => {
    const insert = store.insert.bind(store);
    store.insert = (async () => {
      throw new Error("disk full");
    }) as typeof store.insert;
    try {
      const res = await post("k17", { name: "P" });
      expect(res?.status).toBe(500);
      expect(await merchants("P")).toHaveLength(0);
    } finally {
      store.insert = insert;
    }
  });
});
