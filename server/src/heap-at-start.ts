import { processHeapInputs, sizeHeap } from "./heap.ts";

// Imported first by main.ts, so the process replaces itself (heap.ts) before the server's modules run.

type Execve = (file: string, args: string[], env: NodeJS.ProcessEnv) => never;

/** What main.ts logs about the heap once its logger exists. */
export const heapNote = sizeHeap(processHeapInputs(), {
  // cast: process.execve is Node 22.15+ and 24's (not in @types/node 20's Process, the types the server builds with).
  execve: (process as { execve?: Execve }).execve?.bind(process),
  execPath: process.execPath,
  execArgv: process.execArgv,
  argv: process.argv,
  env: process.env,
});
