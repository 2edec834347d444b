import { describe, expect, it } from "vitest";
import { ResourceStack } from "./resource-stack.ts";

describe("ResourceStack", () => {
  it("closes the last opened first, each once", async () => {
    const closed: string[] = [];
    const stack = new ResourceStack();
    stack.defer("store", () => closed.push("store"));
    stack.defer("listener", async () => {
      closed.push("listener");
    });
    stack.defer("timer", () => closed.push("timer"));
    await stack.disposeAsync();
    await stack.disposeAsync();
    expect(closed).toEqual(["timer", "listener", "store"]);
    expect(stack.disposed).toBe(true);
    expect(() => stack.defer("late", () => {})).toThrow(/already closed/);
  });

  it("closes the rest when one close fails, then reports the failure by name", async () => {
    const closed: string[] = [];
    const stack = new ResourceStack();
    stack.defer("store", () => closed.push("store"));
    stack.defer("listener", () => {
      throw new Error("EBADF");
    });
    stack.defer("timer", () => closed.push("timer"));
    await expect(stack.disposeAsync()).rejects.toThrow("closing listener failed");
    expect(closed).toEqual(["timer", "store"]);
  });

  it("gathers several failures in one AggregateError", async () => {
    const stack = new ResourceStack();
    stack.defer("a", () => Promise.reject(new Error("a")));
    stack.defer("b", () => Promise.reject(new Error("b")));
    const err = await stack.disposeAsync().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AggregateError);
    expect((err as AggregateError).errors.map((e: Error) => e.message)).toEqual([
      "closing b failed",
      "closing a failed",
    ]);
  });

  it("unwinds what a failed start opened and rethrows the start's own error, not the unwinding's", async () => {
    const closed: string[] = [];
    const cause = new Error("PORT in use");
    const started = ResourceStack.unwindOnFailure(async (stack) => {
      stack.defer("store", () => closed.push("store"));
      stack.defer("broken", () => {
        throw new Error("cannot close");
      });
      throw cause;
    });
    const err = await started.catch((e: unknown) => e);
    expect(err).toBe(cause);
    expect(closed).toEqual(["store"]);
    expect((err as { suppressed?: Error }).suppressed?.message).toBe("closing broken failed");
  });

  it("leaves what a successful start opened open", async () => {
    const closed: string[] = [];
    const stack = await ResourceStack.unwindOnFailure(async (s) => {
      s.defer("store", () => closed.push("store"));
      return s;
    });
    expect(closed).toEqual([]);
    await stack.disposeAsync();
    expect(closed).toEqual(["store"]);
  });
});
