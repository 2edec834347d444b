import type { components } from "@payments/contract/types";
import { DuplicateKeyError, type Page, type PageResult } from "../../store/port.ts";
import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { commit } from "../kernel/commit.ts";
import { inEnvironment } from "../kernel/environment.ts";
import { DomainError, invalid, notFound } from "../kernel/errors.ts";
import { newId } from "../kernel/ids.ts";
import type { QueryParams } from "../kernel/operations.ts";
import { parseNetwork } from "./ip.ts";
import type { FraudListDoc, FraudListItemDoc, FraudStore } from "./records.ts";
import type { ListKind } from "./rules.ts";

// Value lists (spec: FraudList, FraudListItem; /v1/fraud/lists, /v1/fraud/list_items). Each item is
// its own document keyed for lookup by `<kind>:<normalized value>`, so evaluating a transaction is one
// indexed query over every list of the environment (./facts.ts), and adding or removing an item
// touches one item and its list's count.

/** The most items one list holds. */
export const MAX_ITEMS = 10_000;

const DOMAIN_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function isDomain(text: string): boolean {
  const labels = text.split(".");
  return text.length <= 253 && labels.length >= 2 && labels.every((l) => DOMAIN_LABEL.test(l));
}

/** An email's parts, lower-cased, or null when it is not an address. */
export function emailParts(text: string): { email: string; domain: string } | null {
  const email = text.trim().toLowerCase();
  const at = email.lastIndexOf("@");
  if (at < 1 || email.length > 254 || /\s/.test(email)) return null;
  const domain = email.slice(at + 1);
  return isDomain(domain) ? { email, domain } : null;
}

/** The domain and each parent with at least two labels (`mail.example.com`, `example.com`). */
export function domainAndParents(domain: string): string[] {
  const labels = domain.split(".");
  const out: string[] = [];
  for (let i = 0; i <= labels.length - 2; i++) out.push(labels.slice(i).join("."));
  return out;
}

/** A value of the kind in its stored form, or a 400 naming `value` that says what the kind takes. */
export function normalizeValue(kind: ListKind, raw: string): string {
  const text = raw.trim();
  switch (kind) {
    case "card_bin":
      if (/^[0-9]{6,8}$/.test(text)) return text;
      throw invalid("value", "must be a card BIN: the first 6 to 8 digits of a card number");
    case "card_fingerprint":
      if (/^fp_[0-9a-f]{32}$/.test(text)) return text;
      throw invalid("value", "must be a card fingerprint (fp_ and 32 lower-case hex digits, as on a token)");
    case "ip_address": {
      const network = parseNetwork(text);
      if (network) return network.cidr;
      throw invalid("value", "must be an IPv4 or IPv6 address or CIDR range");
    }
    case "email": {
      const parts = emailParts(text);
      if (parts) return parts.email;
      throw invalid("value", "must be an email address");
    }
    case "email_domain": {
      const domain = text.toLowerCase().replace(/^@/, "");
      if (isDomain(domain)) return domain;
      throw invalid("value", "must be a domain name, such as example.com");
    }
    case "country":
      if (/^[A-Za-z]{2}$/.test(text)) return text.toUpperCase();
      throw invalid("value", "must be an ISO 3166-1 alpha-2 country code, such as GB");
  }
}

export const matchKey = (kind: ListKind, value: string) => `${kind}:${value}`;

/** createFraudList's body (the contract's FraudListCreate). */
export type FraudListCreate = components["schemas"]["FraudListCreate"];

export function createFraudLists(store: FraudStore, clock: Clock): FraudLists {
  async function load(livemode: boolean, id: string, param = "id"): Promise<FraudListDoc> {
    return inEnvironment(await store.get("fraud_lists", id), livemode, "fraud list", id, param);
  }

  return {
    load,

    async create(caller: Caller, input: FraudListCreate): Promise<FraudListDoc> {
      const list: FraudListDoc = {
        id: newId("fl"),
        livemode: caller.livemode,
        created_at: clock.createdAt(caller.livemode),
        name: input.name,
        kind: input.kind,
        action: input.action,
        item_count: 0,
      };
      return commit(store, caller, async (tx) => {
        await tx.insert("fraud_lists", list);
        return list;
      });
    },

    get: (caller: Caller, id: string) => load(caller.livemode, id),

    list: (
      caller: Caller,
      filter: Pick<QueryParams<"listFraudLists">, "kind">,
      page: Page,
    ): Promise<PageResult<FraudListDoc>> =>
      store.list("fraud_lists", { livemode: caller.livemode, ...(filter.kind ? { kind: filter.kind } : {}) }, page),

    /** Deletes the list and its items in one transaction: no evaluation sees half a list. */
    async delete(caller: Caller, id: string): Promise<FraudListDoc> {
      const list = await load(caller.livemode, id);
      const deleted = await store.transaction(async (tx) => {
        if (!(await tx.delete("fraud_lists", id))) return false;
        await tx.deleteMany("fraud_list_items", { list_id: id });
        return true;
      });
      if (!deleted) throw notFound("fraud list", id);
      return list;
    },

    /**
     * Adds a value (normalized: a range's network address, lower-case emails and domains). A value the
     * list holds already, or a full list, is a 409; the list's count and the item change together.
     */
    async addItem(caller: Caller, listId: string, raw: string): Promise<FraudListItemDoc> {
      const list = await load(caller.livemode, listId);
      const value = normalizeValue(list.kind, raw);
      const listValue = `${list.id}|${value}`;
      const duplicate = () => new DomainError("conflict", `The list already holds ${value}.`, { param: "value" });
      if (await store.findOne("fraud_list_items", { list_value: listValue })) throw duplicate();
      const item: FraudListItemDoc = {
        id: newId("fli"),
        livemode: caller.livemode,
        created_at: clock.createdAt(caller.livemode),
        list_id: list.id,
        list_name: list.name,
        kind: list.kind,
        action: list.action,
        value,
        match_key: matchKey(list.kind, value),
        list_value: listValue,
      };
      try {
        return await commit(store, caller, async (tx) => {
          const counted = await tx.update(
            "fraud_lists",
            list.id,
            { inc: { item_count: 1 } },
            { item_count: { $lt: MAX_ITEMS } },
          );
          if (!counted) {
            if (!(await tx.get("fraud_lists", list.id))) throw notFound("fraud list", list.id);
            throw new DomainError(
              "conflict",
              `The list is full (${MAX_ITEMS} items); remove some or make another list.`,
            );
          }
          await tx.insert("fraud_list_items", item);
          return item;
        });
      } catch (err) {
        // The same value added concurrently: the unique index on list_value refused the second.
        if (err instanceof DuplicateKeyError) throw duplicate();
        throw err;
      }
    },

    async listItems(caller: Caller, listId: string, page: Page): Promise<PageResult<FraudListItemDoc>> {
      await load(caller.livemode, listId);
      return store.list("fraud_list_items", { livemode: caller.livemode, list_id: listId }, page);
    },

    async deleteItem(caller: Caller, id: string): Promise<FraudListItemDoc> {
      const item = inEnvironment(await store.get("fraud_list_items", id), caller.livemode, "fraud list item", id);
      const deleted = await store.transaction(async (tx) => {
        if (!(await tx.delete("fraud_list_items", id))) return false;
        await tx.update("fraud_lists", item.list_id, { inc: { item_count: -1 } });
        return true;
      });
      if (!deleted) throw notFound("fraud list item", id);
      return item;
    },
  };
}

/** The fraud value lists' service (spec: FraudList, FraudListItem). */
export interface FraudLists {
  load: (livemode: boolean, id: string, param?: string) => Promise<FraudListDoc>;
  create(caller: Caller, input: FraudListCreate): Promise<FraudListDoc>;
  get: (caller: Caller, id: string) => Promise<FraudListDoc>;
  list: (
    caller: Caller,
    filter: Pick<QueryParams<"listFraudLists">, "kind">,
    page: Page,
  ) => Promise<PageResult<FraudListDoc>>;
  /** Deletes the list and its items in one transaction: no evaluation sees half a list. */
  delete(caller: Caller, id: string): Promise<FraudListDoc>;
  /**
   * Adds a value (normalized: a range's network address, lower-case emails and domains). A value the
   * list holds already, or a full list, is a 409; the list's count and the item change together.
   */
  addItem(caller: Caller, listId: string, raw: string): Promise<FraudListItemDoc>;
  listItems(caller: Caller, listId: string, page: Page): Promise<PageResult<FraudListItemDoc>>;
  deleteItem(caller: Caller, id: string): Promise<FraudListItemDoc>;
}
