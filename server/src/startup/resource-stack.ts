/**
 * What the server opened on its way up, to be closed in the reverse order: the shape of the standard
 * `AsyncDisposableStack` (TC39 explicit resource management), which Node 20 does not have yet (it
 * arrives with V8 13.x in Node 24) and whose `await using` the project's TypeScript target (ES2023)
 * would have to rewrite. When the platform has it, this file is replaced by it without touching the
 * callers: `defer` and `disposeAsync` keep their meaning.
 *
 * Every start-up step that opens something (the store, a listener, a timer, the dispatcher) says at once
 * how to close it; a failure at any later step then unwinds everything before it (startServer), and
 * a graceful close runs the same list.
 */
export class ResourceStack {
  #undo: Array<{ name: string; close: () => unknown }> = [];
  #disposed = false;

  /** Registers how to close something just opened; `name` says what, in a failure's message. */
  defer(name: string, close: () => unknown): void {
    if (this.#disposed) throw new Error(`cannot register ${name}: the resource stack is already closed`);
    this.#undo.push({ name, close });
  }

  /** Whether disposeAsync has run (or is running). */
  get disposed(): boolean {
    return this.#disposed;
  }

  /**
   * Closes everything registered, the last opened first, each once. A close that fails does not stop
   * the others; the failures are thrown together afterwards (an AggregateError when there are several).
   */
  async disposeAsync(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    const failures: unknown[] = [];
    for (let entry = this.#undo.pop(); entry; entry = this.#undo.pop()) {
      try {
        await entry.close();
      } catch (err) {
        failures.push(new Error(`closing ${entry.name} failed`, { cause: err }));
      }
    }
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, "closing what the server had opened failed");
  }

  /**
   * Runs `open` (a start-up), closing everything `open` registered if it throws, and rethrowing its error:
   * a failure while unwinding is attached as the error's `suppressed` list, never hiding the cause.
   */
  static async unwindOnFailure<T>(open: (stack: ResourceStack) => Promise<T>): Promise<T> {
    const stack = new ResourceStack();
    try {
      return await open(stack);
    } catch (err) {
      try {
        await stack.disposeAsync();
      } catch (closing) {
        if (err instanceof Error) Object.assign(err, { suppressed: closing });
      }
      throw err;
    }
  }
}
