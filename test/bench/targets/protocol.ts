// What a benchmark target process (a child of ../run.ts) tells its parent over the IPC channel once
// it listens. Each target runs in its own process so the parent can read that process's memory from
// /proc and the load generator's own allocations are not counted.

import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";

export interface ReadyMessage {
  type: "ready";
  url: string;
  /** Payments server only: a sandbox key with scope `*`. */
  key?: string;
  /** A token created before the run, for GET /v1/tokens/{id} and the charges. */
  tokenId?: string;
  /** Payments server only: an active merchant created before the run, for POST /v1/charges. */
  merchantId?: string;
  /** The production build only: a production key with scope `*`, and a token and a merchant of production. */
  live?: { key: string; tokenId: string; merchantId: string };
}

/**
 * Parent → payments target: record `count` events straight into the store (as the change that causes
 * an event would, outbox flag set), in transactions of `batch`, for the webhook throughput run. The
 * target answers with EmittedMessage once they are committed.
 */
export interface EmitEventsMessage {
  type: "emit-events";
  count: number;
  batch: number;
}

export interface EmittedMessage {
  type: "emitted";
  count: number;
}

/** The body every card-tokenizing request of the benchmark sends (the sandbox test card). */
export const TOKEN_BODY = { card: "4242424242424242", holder: "Bench Holder", exp_month: 12, exp_year: 2030 };

/** The body of every POST /v1/charges of the benchmark: a card charge on the prepared merchant and token. */
export function chargeBody(merchantId: string, tokenId: string) {
  return { merchant_id: merchantId, amount: 2500, currency: "USD", payment_method: { type: "card", token: tokenId } };
}

/**
 * The body of every POST /v1/fraud/evaluations of the benchmark: a prospective transaction on the
 * prepared merchant and token, from a customer IP address (the sandbox's VPN range: one signal).
 */
export function evaluationBody(merchantId: string, tokenId: string) {
  return {
    merchant_id: merchantId,
    amount: 2500,
    currency: "USD",
    card: { token: tokenId },
    customer: { email: "bench@example.com", ip: "203.0.113.7", country: "US" },
  };
}

/**
 * Parent → target: start or stop a CPU profile of this process (`npm run bench:profile`). Taken with
 * the inspector's Profiler in the process itself, so it covers only the measured load, not the
 * start-up (module loading and schema compilation would otherwise weigh in every percentage).
 */
export type ProfileMessage = { type: "profile-start"; intervalUs: number } | { type: "profile-stop"; file: string };

/** Answers ProfileMessages: `profile-started` once sampling runs, `profile-written` once the file is. */
export function profileOnRequest(): void {
  let session: Session | null = null;
  const post = <T>(method: string, params?: object) =>
    new Promise<T>((resolve, reject) => {
      session?.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result as T)));
    });
  process.on("message", async (message: ProfileMessage) => {
    if (message?.type === "profile-start") {
      session = new Session();
      session.connect();
      await post("Profiler.enable");
      await post("Profiler.setSamplingInterval", { interval: message.intervalUs });
      await post("Profiler.start");
      process.send?.({ type: "profile-started" });
    } else if (message?.type === "profile-stop" && session) {
      const { profile } = await post<{ profile: unknown }>("Profiler.stop");
      writeFileSync(message.file, JSON.stringify(profile));
      session.disconnect();
      session = null;
      process.send?.({ type: "profile-written", file: message.file });
    }
  });
}

/** Ends the process when the parent goes away, so a crashed benchmark leaves no server behind. */
export function exitWithParent(close: () => Promise<void>): void {
  const stop = () => {
    close().finally(() => process.exit(0));
  };
  process.once("disconnect", stop);
  process.once("SIGTERM", stop);
}
