// Vitest setup file (test/vitest.config.ts). dredd 14 logs through winston 2.4, whose modules read
// `padLevels` from each other while they are still loading; Node then prints "Accessing non-existent
// property 'padLevels' of module exports inside circular dependency" in the middle of the test output.
// It is harmless (winston defines the property a moment later) and not ours to fix, so exactly that
// warning is dropped here; every other warning is printed as before.
const emitWarning = process.emitWarning.bind(process);
const WINSTON_CIRCULAR = /non-existent property 'padLevels' of module exports inside circular dependency/;

process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  const message = typeof warning === "string" ? warning : warning.message;
  if (WINSTON_CIRCULAR.test(message)) return;
  (emitWarning as (w: string | Error, ...r: unknown[]) => void)(warning, ...rest);
}) as typeof process.emitWarning;
