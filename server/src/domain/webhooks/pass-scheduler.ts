import type { DomainLog } from "../kernel/log.ts";
import type { OutboxSignal } from "./outbox.ts";

// When the webhook dispatcher looks for work (dispatcher.ts): at once on start, after each commit of
// this instance that made work (the outbox signal), when an attempt frees a slot, and every poll for
// the work other instances made and the retries that came due. It knows nothing of deliveries: it runs
// the dispatcher's `pass`, one at a time.

/** The least time between the starts of two passes, however often commits wake the dispatcher. */
const MIN_PASS_GAP_MS = 10;

export interface PassScheduler {
  /** Starts: a pass now, on every signalled commit, and every poll. */
  start(): void;
  /**
   * Asks for a pass soon; passes never overlap, and a request during one makes one more after it.
   * A commit's request (`afterCommit`) waits until MIN_PASS_GAP_MS after the last pass began: under
   * load every commit asks, and spaced out, one pass fans out the events of many commits at once, for
   * a delivery that starts a few milliseconds later at most (docs/webhooks.md "How delivery works").
   * Any other request (an attempt ended and freed its slot) is served at once.
   */
  wake(afterCommit?: boolean): void;
  /** Stops asking for passes, and waits for the one under way. */
  stop(): Promise<void>;
  /** Whether stop() was called: the dispatcher then claims no more work. */
  readonly stopping: boolean;
}

/** What the scheduler holds between passes; one object rather than loose variables, so its states read at once. */
interface SchedulerState {
  started: boolean;
  stopping: boolean;
  /** A pass was asked for while one was running: run one more after it. */
  again: boolean;
  /** ... and that request should not wait for MIN_PASS_GAP_MS (see wake). */
  againAtOnce: boolean;
  /** The pass running or waiting to run, if any. */
  loop: Promise<void> | null;
  /** When the last pass started (performance.now()), for MIN_PASS_GAP_MS. */
  lastPass: number;
  poll: NodeJS.Timeout | null;
  unsubscribe: (() => void) | null;
}

export function passScheduler(options: {
  pass: () => Promise<unknown>;
  pollIntervalMs: number;
  signal?: OutboxSignal;
  log: DomainLog;
}): PassScheduler {
  const state: SchedulerState = {
    started: false,
    stopping: false,
    again: false,
    againAtOnce: false,
    loop: null,
    lastPass: Number.NEGATIVE_INFINITY,
    poll: null,
    unsubscribe: null,
  };

  async function run(): Promise<void> {
    state.lastPass = performance.now();
    state.again = false;
    state.againAtOnce = false;
    try {
      await options.pass();
    } catch (err) {
      options.log.error({ err }, "webhook dispatcher pass failed; the next poll retries");
    } finally {
      state.loop = null;
      if (state.again) wake(!state.againAtOnce);
    }
  }

  function wake(afterCommit = false): void {
    if (!state.started || state.stopping) return;
    if (state.loop) {
      state.again = true;
      state.againAtOnce ||= !afterCommit;
      return;
    }
    const wait = afterCommit ? state.lastPass + MIN_PASS_GAP_MS - performance.now() : 0;
    state.loop = new Promise<void>((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve))).then(
      run,
    );
  }

  return {
    start() {
      if (state.started) return;
      state.started = true;
      state.unsubscribe = options.signal?.subscribe(() => wake(true)) ?? null;
      state.poll = setInterval(wake, options.pollIntervalMs);
      state.poll.unref();
      wake();
    },
    wake,
    async stop() {
      state.stopping = true;
      if (state.poll) clearInterval(state.poll);
      state.unsubscribe?.();
      await state.loop;
    },
    get stopping() {
      return state.stopping;
    },
  };
}
