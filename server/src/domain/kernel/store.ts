import type { Store, TxOps } from "../../store/port.ts";
import type { idempotencyCollections } from "./commit.ts";
import type { eventCollections } from "./events.ts";
import type { DocsOf } from "./records.ts";

// The walls between areas (issue 29, "Declared areas"): an area's code reaches the store only through
// `AreaStore<typeof itsCollections>`, typed to the collections it declares in its records.ts plus the
// kernel's (events, recorded in the same transaction as the change they report, and idempotency, the
// kernel's commit record). Reading another area's collection therefore does not compile; it goes through
// that area's declared service (kernel/areas.types.test.ts proves both, and scans for a way around).
//
// Every area's store is the same store at run time: a transaction begun by one area is handed to
// another's service (a charge's capture posting to the ledger) as it is, and the receiving code sees it
// through its own `AreaTx`, so each side touches only its own collections inside the one transaction.

/** The collections every area may use: the kernel's own. */
export type KernelCollections = typeof eventCollections & typeof idempotencyCollections;

/** The document types an area reaches: its own collections' and the kernel's. */
export type AreaDocs<Own> = DocsOf<Own & KernelCollections>;

/** The store as an area sees it: its own collections (`Own`, its records.ts registry) and the kernel's. */
export type AreaStore<Own> = Store<AreaDocs<Own>>;

/** A transaction as an area sees it (the same walls as AreaStore). */
export type AreaTx<Own> = TxOps<AreaDocs<Own>>;
