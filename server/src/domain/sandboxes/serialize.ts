import type { Schemas } from "../kernel/operations.ts";
import type { ServiceKeyDoc } from "../service-keys/records.ts";
import { serviceKeyWithSecret } from "../service-keys/serialize.ts";
import type { SandboxDoc } from "./records.ts";

// Stored sandbox records → the contract's IsolatedSandbox: never its key tag or vault keys.

export const sandbox = (s: SandboxDoc): Schemas["IsolatedSandbox"] => ({
  id: s.id,
  object: "sandbox",
  name: s.name,
  livemode: s.livemode,
  created_at: s.created_at,
});

/** POST /v1/sandboxes answers with the first key's secret, once (SandboxWithKey; never stored for replay). */
export const sandboxWithKey = (made: {
  sandbox: SandboxDoc;
  key: { key: ServiceKeyDoc; secret: string };
}): Schemas["SandboxWithKey"] => ({
  ...sandbox(made.sandbox),
  key: serviceKeyWithSecret(made.key),
});

export const deletedSandbox = (s: SandboxDoc): Schemas["DeletedSandbox"] => ({
  id: s.id,
  object: "sandbox",
  deleted: true,
});
