import { randomBytes } from "node:crypto";
import type { components } from "@payments/contract/types";
import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { commit } from "../kernel/commit.ts";
import { inEnvironment } from "../kernel/environment.ts";
import { notFound } from "../kernel/errors.ts";
import { newId } from "../kernel/ids.ts";
import { iso } from "../kernel/time.ts";
import { validateCard } from "./card.ts";
import { fingerprintPan, openPan, sealPan, type VaultKeys } from "./crypto.ts";
import type { TokenDoc, VaultStore } from "./records.ts";

// The vault (spec/resources/tokens.tsp). The card number exists in clear only in this module's local
// variables: it is sealed before anything is stored, the CVC is checked and dropped, and reveal is audited.

/** createToken's body (the contract's TokenCreate). */
export type TokenCreate = components["schemas"]["TokenCreate"];

export interface Revealed {
  token: TokenDoc;
  pan: string;
  revealedAt: string;
}

export function createTokens(store: VaultStore, keys: VaultKeys, clock: Clock): Tokens {
  /** `param` names the request field the id came from, for the 404 problem. */
  async function load(livemode: boolean, id: string, param = "id"): Promise<TokenDoc> {
    const token = inEnvironment(await store.get("tokens", id), livemode, "token", id, param);
    // A deleted token is gone for every caller: its card number was erased.
    if (token.deleted_at) throw notFound("token", id, param);
    return token;
  }

  return {
    async create(caller: Caller, input: TokenCreate): Promise<TokenDoc> {
      // A card's expiry is judged on the caller's environment's clock, like everything it makes.
      const card = validateCard(input, clock.now(caller.livemode));
      const id = newId("tok");
      const token: TokenDoc = {
        id,
        livemode: caller.livemode,
        created_at: clock.createdAt(caller.livemode),
        holder: input.holder,
        brand: card.brand,
        first4: card.first4,
        last4: card.last4,
        exp_month: input.exp_month,
        exp_year: input.exp_year,
        fingerprint: fingerprintPan(card.pan, caller.livemode, keys),
        sealed: sealPan(card.pan, id, keys),
        deleted_at: null,
      };
      return commit(store, caller, async (tx) => {
        await tx.insert("tokens", token);
        return token;
      });
    },

    get: (caller: Caller, id: string) => load(caller.livemode, id),

    /** The card number, for internal use by charges (never serialized). */
    async pan(livemode: boolean, id: string, param = "id"): Promise<{ token: TokenDoc; pan: string }> {
      const token = await load(livemode, id, param);
      if (!token.sealed) throw notFound("token", id, param);
      return { token, pan: openPan(token.sealed, token.id, keys) };
    },

    /**
     * Erases the data key and ciphertext: after this the number cannot be recovered by anyone. They are
     * first overwritten with random bytes of the same length, so a storage engine that keeps the old
     * version of a document keeps noise; then removed; then the store scrubs its files (store/port.ts).
     */
    async delete(caller: Caller, id: string): Promise<TokenDoc> {
      const token = await load(caller.livemode, id);
      if (token.sealed) {
        const noise = (b64: string) => randomBytes(Buffer.from(b64, "base64").length).toString("base64");
        const { kek_id, wrapped_dek, sealed_pan } = token.sealed;
        await store.update(
          "tokens",
          id,
          { set: { sealed: { kek_id, wrapped_dek: noise(wrapped_dek), sealed_pan: noise(sealed_pan) } } },
          { deleted_at: null },
        );
      }
      const deleted = await store.update(
        "tokens",
        id,
        { set: { sealed: null, deleted_at: iso(clock.now(caller.livemode)) } },
        { deleted_at: null },
      );
      if (!deleted) throw notFound("token", id);
      await store.scrub();
      return deleted;
    },

    /** Returns the card number and writes the audit record first, in one transaction: no reveal goes unaudited. */
    async reveal(caller: Caller, id: string): Promise<Revealed> {
      // The audit record says when, in the world, someone saw a card number: the server's own time.
      const revealedAt = iso(clock.real());
      return commit(store, caller, async (tx) => {
        const token = inEnvironment(await tx.get("tokens", id), caller.livemode, "token", id);
        if (token.deleted_at || !token.sealed) throw notFound("token", id);
        await tx.insert("audit_log", {
          id: newId("aud"),
          livemode: caller.livemode,
          created_at: revealedAt,
          action: "token.reveal",
          object_id: id,
          key_id: caller.keyId,
          request_id: caller.requestId,
        });
        return { token, pan: openPan(token.sealed, token.id, keys), revealedAt };
      });
    },
  };
}

/** The vault's service: card tokens (spec: Tokens), the only way to a card number. */
export interface Tokens {
  create(caller: Caller, input: TokenCreate): Promise<TokenDoc>;
  get: (caller: Caller, id: string) => Promise<TokenDoc>;
  /** The card number, for internal use by charges (never serialized). */
  pan(
    livemode: boolean,
    id: string,
    param?: string,
  ): Promise<{
    token: TokenDoc;
    pan: string;
  }>;
  /**
   * Erases the data key and ciphertext: after this the number cannot be recovered by anyone. They are
   * first overwritten with random bytes of the same length, so a storage engine that keeps the old
   * version of a document keeps noise; then removed; then the store scrubs its files (store/port.ts).
   */
  delete(caller: Caller, id: string): Promise<TokenDoc>;
  /** Returns the card number and writes the audit record first, in one transaction: no reveal goes unaudited. */
  reveal(caller: Caller, id: string): Promise<Revealed>;
}
