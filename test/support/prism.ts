import { startMock } from "../mock/mock.ts";

// The sandbox mock as the suites run it, as `npm run mock` runs it for QA (../mock/mock.ts): the
// server's own front, which refuses what the server refuses, in front of Prism, which answers the rest
// with the contract's examples; on 127.0.0.1 and a free port, problem `type` links on its own address.

export interface RunningPrism {
  url: string;
  stop(): Promise<void>;
}

export function startPrism(): Promise<RunningPrism> {
  return startMock();
}
