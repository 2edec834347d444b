import { z } from "zod";
import { group, type Rule, secret } from "./kit.ts";

// The vault's keys (domain/vault/crypto.ts): generated in development, required in production.

export const vaultSettings = group("vault", {
  VAULT_MASTER_KEY: secret(
    z.string().min(1).optional(),
    "32-byte master key (base64 or hex) that wraps each token's data key. Required in production.",
  ),
  VAULT_FINGERPRINT_KEY: secret(
    z.string().min(1).optional(),
    "32-byte key (base64 or hex) for card fingerprints; must differ from the master key. Required in production.",
  ),
});

type VaultConfig = {
  NODE_ENV: string;
  VAULT_MASTER_KEY?: string | undefined;
  VAULT_FINGERPRINT_KEY?: string | undefined;
};

/** Production never runs on generated keys. */
export const vaultKeysInProduction: Rule<VaultConfig> = (c, problem) => {
  if (c.NODE_ENV !== "production") return;
  for (const key of ["VAULT_MASTER_KEY", "VAULT_FINGERPRINT_KEY"] as const) {
    if (!c[key]) problem(key, "is required in production (generate one with: openssl rand -base64 32)");
  }
};

/** Both keys or neither: one given and the other generated would not be a pair anyone chose. */
export const vaultKeysTogether: Rule<VaultConfig> = (c, problem) => {
  if (Boolean(c.VAULT_MASTER_KEY) !== Boolean(c.VAULT_FINGERPRINT_KEY)) {
    problem(
      "VAULT_FINGERPRINT_KEY",
      "set both VAULT_MASTER_KEY and VAULT_FINGERPRINT_KEY, or neither (development generates both)",
    );
  }
};
