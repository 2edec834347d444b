// Loaded into the production build by `npm run bench:alloc` (../alloc.ts, `node --require`), never by the
// server itself: V8's sampling heap profiler, started and stopped by SIGUSR2, counting objects the
// garbage collector has already taken back too (includeObjectsCollectedBy*), so the profile is every
// byte allocated meanwhile, not what is still alive. The profile goes to the file named by ALLOC_OUT.
const inspector = require("node:inspector");
const { writeFileSync } = require("node:fs");

const session = new inspector.Session();
session.connect();
let sampling = false;
let profiles = 0;
process.on("SIGUSR2", () => {
  if (!sampling) {
    sampling = true;
    session.post("HeapProfiler.startSampling", {
      samplingInterval: 8192,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    return;
  }
  sampling = false;
  session.post("HeapProfiler.stopSampling", (error, result) => {
    writeFileSync(
      `${process.env.ALLOC_OUT}.${++profiles}`,
      error ? JSON.stringify({ error: String(error) }) : JSON.stringify(result.profile),
    );
  });
});
