// The server package's public surface, for tests, the benchmark and embedding.
export { type Config, ConfigError, loadConfig } from "./config.ts";
export type { Caller } from "./domain/context.ts";
export { recordEvent } from "./domain/events.ts";
export { newId } from "./domain/ids.ts";
export { createDomain, type Domain } from "./domain/index.ts";
export { createApp } from "./http/app.ts";
export { type ContractOperation, contractOperations, loadContract } from "./http/contract.ts";
export { publicKeyNamespace, recordId as idempotencyRecordId } from "./http/idempotency.ts";
export { createLogger } from "./logger.ts";
export { IN_MEMORY, openStore, type RunningServer, startServer, type WebhookOverrides } from "./server.ts";
