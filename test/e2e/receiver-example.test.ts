import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { unwrap } from "@payments/client";
import { afterEach, describe, expect, it } from "vitest";
import { childEnv, ROOT } from "../support/process.ts";
import { clientFor, useServer } from "./fixtures.ts";

// The example receiver a reader runs from docs/webhooks.md "Registering an endpoint, and receiving on
// localhost in the sandbox" (clients/typescript/examples/receiver.ts), against a real server: an
// endpoint it registered for itself is deleted when it is stopped, so none is left behind with every
// delivery failing; an endpoint whose secret it was given is left alone.

const CLIENT_DIR = resolve(ROOT, "clients/typescript");

interface Receiver {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first stdout line matching `pattern`; rejects if the process exits first. */
  line(pattern: RegExp): Promise<string>;
  exited: Promise<number | null>;
}

function runReceiver(env: Record<string, string>): Receiver {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/receiver.ts"], {
    cwd: CLIENT_DIR,
    env: childEnv({ PORT: "0", ...env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  return {
    child,
    output: () => out,
    exited,
    line: (pattern) =>
      new Promise((done, fail) => {
        const look = () => {
          const found = out.split("\n").find((l) => pattern.test(l));
          if (found === undefined) return;
          child.stdout.off("data", look);
          done(found);
        };
        child.stdout.on("data", look);
        look();
        void exited.then(() => fail(new Error(`the receiver exited before printing ${pattern}:\n${out}`)));
      }),
  };
}

describe("the example webhook receiver", { timeout: 60_000 }, () => {
  const { server } = useServer();
  const running: Receiver[] = [];
  afterEach(() => {
    for (const r of running.splice(0)) if (r.child.exitCode === null) r.child.kill("SIGKILL");
  });

  it("deletes the endpoint it registered when stopped with Ctrl-C (SIGINT), and says so", async () => {
    const key = await server.key(["webhooks"]);
    const receiver = runReceiver({ PAYMENTS_KEY: key, PAYMENTS_URL: server.url });
    running.push(receiver);
    const registeredLine = await receiver.line(/^registered webhook endpoint we_\w+ for /);
    const id = /(we_\w+)/.exec(registeredLine)?.[1] ?? "";
    const url = (await receiver.line(/^listening on /)).replace("listening on ", "");
    expect(registeredLine).toContain("Ctrl-C");

    const payments = clientFor(server, key);
    const endpoint = unwrap(await payments.GET("/v1/webhook_endpoints/{id}", { params: { path: { id } } }));
    expect(endpoint).toMatchObject({ url, status: "enabled", enabled_events: ["*"] });

    receiver.child.kill("SIGINT");
    expect(await receiver.exited, receiver.output()).toBe(0);
    expect(receiver.output()).toContain(`deleted webhook endpoint ${id}`);
    const after = await payments.GET("/v1/webhook_endpoints/{id}", { params: { path: { id } } });
    expect(after.response.status).toBe(404);
    expect(unwrap(await payments.GET("/v1/webhook_endpoints")).data.map((e) => e.id)).not.toContain(id);
  });

  it("deletes it on SIGTERM too", async () => {
    const key = await server.key(["webhooks"]);
    const receiver = runReceiver({ PAYMENTS_KEY: key, PAYMENTS_URL: server.url });
    running.push(receiver);
    const id = /(we_\w+)/.exec(await receiver.line(/^registered webhook endpoint /))?.[1] ?? "";
    await receiver.line(/^listening on /);

    receiver.child.kill("SIGTERM");
    expect(await receiver.exited, receiver.output()).toBe(0);
    expect(receiver.output()).toContain(`deleted webhook endpoint ${id}`);
    const after = await clientFor(server, key).GET("/v1/webhook_endpoints/{id}", { params: { path: { id } } });
    expect(after.response.status).toBe(404);
  });

  it("leaves alone the endpoint whose secret it was given", async () => {
    const key = await server.key(["webhooks"]);
    const payments = clientFor(server, key);
    const endpoint = unwrap(
      await payments.POST("/v1/webhook_endpoints", {
        body: { url: "http://127.0.0.1:4242/webhooks", enabled_events: ["payment.captured"] },
      }),
    );
    const receiver = runReceiver({ WEBHOOK_SECRET: endpoint.secret });
    running.push(receiver);
    await receiver.line(/^listening on /);

    receiver.child.kill("SIGINT");
    expect(await receiver.exited, receiver.output()).toBe(0);
    expect(receiver.output()).toContain("left as it was");
    expect(receiver.output()).not.toContain("deleted");
    const after = unwrap(await payments.GET("/v1/webhook_endpoints/{id}", { params: { path: { id: endpoint.id } } }));
    expect(after).toMatchObject({ id: endpoint.id, status: "enabled" });
  });
});
