// The server package's public surface, for tests, the benchmark and embedding.
export {
  createSimulatorProcessor,
  type SimulatorCounts,
  type SimulatorProcessor,
} from "./adapters/processor-simulator.ts";
export { type Config, ConfigError, loadConfig } from "./config.ts";
export { COLLECTIONS } from "./domain/areas.ts";
export { createDomain, type Domain } from "./domain/index.ts";
export type { Caller } from "./domain/kernel/caller.ts";
export { recordEvent } from "./domain/kernel/events.ts";
export { newId } from "./domain/kernel/ids.ts";
export { type LedgerReport, verifyLedger } from "./domain/ledger/verify.ts";
export { createApp } from "./http/app.ts";
export { type ContractOperation, contractOperations, loadContract } from "./http/contract.ts";
export { publicKeyNamespace, recordId as idempotencyRecordId } from "./http/idempotency.ts";
export { createLogger } from "./logger.ts";
export { type Sandbox, type SandboxOptions, startSandbox } from "./sandbox.ts";
export { IN_MEMORY, openStore, type RunningServer, startServer, type WebhookOverrides } from "./server.ts";
