import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";
import type { AreaDocs, AreaStore, AreaTx } from "../kernel/store.ts";
import type { CardBrand } from "./card.ts";
import type { SealedCard } from "./crypto.ts";

// The vault's stored shapes (spec/resources/tokens.tsp): tokens, whose card number is only ever stored
// sealed, and the audit log of reveals.

export interface TokenDoc extends BaseDoc {
  holder: string;
  brand: CardBrand;
  first4: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  fingerprint: string;
  /** null once deleted: the data key and ciphertext are erased (crypto-shredding). */
  sealed: SealedCard | null;
  deleted_at: string | null;
}

/** Who revealed which card, when (operation revealToken writes one per reveal). */
export interface AuditDoc extends BaseDoc {
  action: "token.reveal";
  object_id: string;
  key_id: string;
  request_id: string;
}

export const vaultCollections = {
  tokens: collection<TokenDoc>([{ fields: ["livemode", "fingerprint"] }]),
  audit_log: collection<AuditDoc>([{ fields: ["object_id"] }]),
};

/** The store as the vault area sees it: its own collections and the kernel's (kernel/store.ts). */
export type VaultStore = AreaStore<typeof vaultCollections>;
export type VaultTx = AreaTx<typeof vaultCollections>;
export type VaultDocs = AreaDocs<typeof vaultCollections>;
