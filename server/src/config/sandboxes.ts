import { group, int, setting } from "./kit.ts";

// Sandboxes on demand (POST /v1/sandboxes, spec/resources/sandboxes.tsp; server/src/sandboxes/host.ts).

export const sandboxSettings = group("sandboxes", {
  SANDBOX_LIMIT: setting(
    int(1, 10_000).default(100),
    "How many sandboxes on demand one store may hold; one more answers 409 `sandbox_limit_reached`.",
  ),
  SANDBOX_IDLE_SECONDS: setting(
    int(1, 86400).default(900),
    "How long a sandbox on demand's store stays open in this process after its last request; its background jobs and webhook deliveries run while it is open.",
  ),
});
