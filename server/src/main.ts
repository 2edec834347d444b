// `npm start`'s entry (dist/main.js once built). First the V8 heap is sized (heap.ts), which on Node
// 22.15+ and 24 replaces this process with one started with the flag (process.execve); only then is
// the server loaded, with a dynamic import. A static import would be loaded and evaluated before
// heap-at-start.ts runs (ES modules link their whole graph first): the 2 MB bundle parsed, the
// contract read, then thrown away by execve and done again, so every start paid its loading twice
// (issue 36, "start-up"). This file, heap.ts and compile-cache.ts import only Node's own modules. Then, before the server
// loads, Node's compile cache is turned on (compile-cache.ts: the built server's code, compiled once
// and read back by the starts after).
import "./heap-at-start.ts";
import { enableCompileCache } from "./compile-cache.ts";

enableCompileCache(import.meta.url);
await import("./server-main.ts");
