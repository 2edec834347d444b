import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Express, type NextFunction, type Request, type RequestHandler, type Response, Router } from "express";
import type { Logger } from "pino";
import type { Config } from "../config.ts";
import type { Domain } from "../domain/index.ts";
import type { Now } from "../domain/kernel/caller.ts";
import type { Sandboxes, SandboxHost, SandboxIdentity } from "../domain/sandboxes/sandboxes.ts";
import type { ServiceKeys } from "../domain/service-keys/service-keys.ts";
import { scopeCheck } from "../http/auth.ts";
import { consoleCookie } from "../http/console.ts";
import { contractValidation } from "../http/front.ts";
import { sandboxPages, sandboxPathPrefix } from "../http/sandbox-pages.ts";
import { IN_MEMORY } from "../startup/data-dir.ts";
import { domainFor, type WebhookOverrides } from "../startup/domain.ts";
import { assembleHttp } from "../startup/http.ts";
import { type Scheduled, startJobs } from "../startup/jobs.ts";
import { ResourceStack } from "../startup/resource-stack.ts";
import { openStoreAt, type ServerStore } from "../startup/store.ts";
import { type Credential, credentialOf, ownedBy, tagOf } from "./console-routing.ts";

// Sandboxes on demand (spec/resources/sandboxes.tsp): the composition root's side. Each sandbox is a
// store of its own (SQLite: DATA_DIR/sandboxes/<id>.sqlite, or an in-memory database; MongoDB: the
// database <MONGODB_DB>_<id>) served by a domain of its own (its vault keys, its sandbox clock, its
// webhook dispatcher and jobs) behind an app of its own. The account's store only keeps the list of
// sandboxes (domain/sandboxes), which tells which sandbox a key belongs to by the tag its secret ends
// with. Isolation is structural: a request with a sandbox's key never reaches any other store, so no
// query needs a sandbox filter and none can forget one.
//
// A sandbox is opened on its first request in a process and closed after SANDBOX_IDLE_SECONDS without
// one; its background jobs and webhook deliveries run while it is open.

/** One open sandbox: its store, domain and app, and what closes them. */
interface OpenSandbox {
  readonly id: string;
  readonly keyTag: string;
  readonly store: ServerStore;
  readonly domain: Domain;
  readonly app: Express;
  /** Requests being served now; the idle timer runs only while there are none. */
  inFlight: number;
  idle: NodeJS.Timeout | null;
  close(): Promise<void>;
}

export interface SandboxHostOptions {
  config: Config;
  logger: Logger;
  now: Now;
  webhooks?: WebhookOverrides;
  /** The server's public address (payment links' `url`, problem types), known once it listens. */
  publicUrl: () => string;
}

export interface SandboxHosting extends SandboxHost {
  /**
   * The front of the account's app: a request whose `Bearer` key belongs to a sandbox is served by that
   * sandbox's app, and so is a keyless page of a sandbox's objects under `/sandboxes/{id}`
   * (http/sandbox-pages.ts); every other request goes on to the account's (`lookup`: domain/sandboxes).
   */
  router(lookup: Pick<Sandboxes, "byTag" | "byId">): RequestHandler;
  /**
   * The contract's validation chain every app of this process shares (the account's and each sandbox's);
   * `accountKeys` records the use of the account's keys.
   */
  validation(accountKeys: Pick<ServiceKeys, "touch">): RequestHandler[];
  /** The sandboxes open in this process now (tests and the idle close). */
  openIds(): string[];
  /** An open sandbox's domain and store, or null when it is not open here (tests make fixtures with it). */
  inspect(id: string): Promise<{ domain: Domain; store: ServerStore } | null>;
  /** Closes every open sandbox (the server's close). */
  close(): Promise<void>;
}

/** Where a sandbox's store lives: a file under DATA_DIR/sandboxes, or a database beside MONGODB_DB. */
function placeOf(config: Config, id: string) {
  return { file: join("sandboxes", `${id}.sqlite`), database: `${config.MONGODB_DB}_${id}` };
}

/** How long a looked-up key tag (found or not) is reused before the account's store is asked again. */
const TAG_CACHE_MS = 1_000;

/** Opens a sandbox's store and starts its domain, app, jobs and webhook dispatcher. */
async function startSandbox(
  options: SandboxHostOptions,
  identity: SandboxIdentity,
  validation: RequestHandler[],
): Promise<OpenSandbox> {
  const { config, now } = options;
  if (!config.MONGODB_URI && config.DATA_DIR !== IN_MEMORY) {
    mkdirSync(join(config.DATA_DIR, "sandboxes"), { recursive: true, mode: 0o700 });
  }
  const logger = options.logger.child({ sandbox: identity.id });
  return ResourceStack.unwindOnFailure(async (stack) => {
    const store = await openStoreAt(config, placeOf(config, identity.id));
    stack.defer("the sandbox's store", () => store.close());
    // The sandbox's pages (a payment link's url, a challenge's next_action) are reached under its prefix.
    const pathPrefix = sandboxPathPrefix(identity.id);
    const baseUrl = () => `${options.publicUrl()}${pathPrefix}`;
    const domain = domainFor(config, store, now, { ...options.webhooks, log: logger }, baseUrl, undefined, {
      vaultKeys: identity.vaultKeys,
      sandbox: { id: identity.id, keyTag: identity.keyTag, name: identity.name },
    });
    stack.defer("the sandbox's webhook sender", () => domain.webhooks.sender.close?.());
    const { app, limits } = assembleHttp(
      stack,
      { config, domain, store, logger, now, publicUrl: options.publicUrl, owner: "the sandbox's" },
      { validation, pathPrefix },
    );
    const jobs: Scheduled[] = startJobs(config, domain, limits, logger);
    stack.defer("the sandbox's jobs", () => Promise.all(jobs.map((job) => job.stop())));
    stack.defer("the sandbox's webhook dispatcher", () => domain.webhooks.dispatcher.stop());
    stack.defer("the sandbox's event streams", () => domain.events.closeStreams());
    if (config.WEBHOOK_DISPATCHER) domain.webhooks.dispatcher.start();
    let closing: Promise<void> | null = null;
    const sandbox: OpenSandbox = {
      id: identity.id,
      keyTag: identity.keyTag,
      store,
      domain,
      app,
      inFlight: 0,
      idle: null,
      close() {
        closing ??= (async () => {
          if (sandbox.idle) clearTimeout(sandbox.idle);
          await stack.disposeAsync();
        })();
        return closing;
      },
    };
    return sandbox;
  });
}

/** Erases a closed sandbox's store: its SQLite files, or its MongoDB database. */
async function eraseStore(config: Config, id: string): Promise<void> {
  if (config.MONGODB_URI) {
    // Loaded only when used, like the store's own driver (startup/store.ts).
    const { MongoClient } = await import("mongodb");
    const client = new MongoClient(config.MONGODB_URI);
    try {
      await client.db(placeOf(config, id).database).dropDatabase();
    } finally {
      await client.close();
    }
    return;
  }
  if (config.DATA_DIR === IN_MEMORY) return; // closing an in-memory database erased it
  const file = join(config.DATA_DIR, placeOf(config, id).file);
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
}

/** What the front needs of the host: how it finds, opens and serves a sandbox. */
interface Routing {
  identityFor(tag: string, lookup: (tag: string) => Promise<SandboxIdentity | null>): Promise<SandboxIdentity | null>;
  opened(identity: SandboxIdentity): Promise<OpenSandbox>;
  /** A Bearer key, or the console's sign-in key or session cookie (./console-routing.ts). */
  credentialFor(req: Request, res: Response): Promise<Credential | undefined>;
  knows(sandbox: OpenSandbox, credential: Credential): Promise<boolean>;
  served(sandbox: OpenSandbox): RequestHandler;
  shut(id: string): Promise<void>;
}

/** SandboxHosting.router: a sandbox's pages by the id in their path, then a sandbox's keys by their tag. */
function frontOf(routing: Routing, lookup: Pick<Sandboxes, "byTag" | "byId">): RequestHandler {
  const byKey = async (req: Request, res: Response, next: NextFunction) => {
    try {
      // Only a sandbox key (`key_test_`) or a console session token can belong to a sandbox on demand.
      const credential = await routing.credentialFor(req, res);
      if (credential === undefined) return next();
      const identity = await routing.identityFor(tagOf(credential), lookup.byTag);
      if (identity === null) return next();
      const sandbox = await routing.opened(identity);
      // A key (or session) of the default sandbox whose last characters happen to be a sandbox's tag
      // stays the default sandbox's: only a credential the sandbox itself knows is served there.
      if (!(await routing.knows(sandbox, credential))) return next();
      routing.served(sandbox)(req, res, next);
    } catch (err) {
      next(err);
    }
  };
  // A page carries no key: the sandbox's id in its path routes it. Asked of the account's store on every
  // page request (pages are few), so a sandbox deleted by another instance is gone at once.
  const byPath = sandboxPages(async (id) => {
    const identity = await lookup.byId(id);
    if (identity === null) {
      await routing.shut(id);
      return null;
    }
    return routing.served(await routing.opened(identity));
  });
  return Router().use(byPath, byKey);
}

export function createSandboxHost(options: SandboxHostOptions): SandboxHosting {
  const { config } = options;
  const open = new Map<string, Promise<OpenSandbox>>();
  const tags = new Map<string, { identity: SandboxIdentity | null; until: number }>();
  /** Which open sandbox each key seen by the router belongs to: the shared scope check records its use there. */
  const keyHome = new Map<string, OpenSandbox>();
  // One validation chain for every sandbox's app: the validator compiles an operation's schemas on its
  // first request, which costs as much as a sandbox's whole start; compiled once, it serves them all.
  // The account's app shares it too (`account`: its keys' use is recorded in the account's store).
  let validation: RequestHandler[] | undefined;
  let account: Pick<ServiceKeys, "touch"> | null = null;
  const sharedValidation = () => {
    validation ??= contractValidation({
      security: scopeCheck(
        { touch: (key) => (keyHome.get(key.id)?.domain.serviceKeys ?? account)?.touch(key) ?? Promise.resolve() },
        options.logger,
      ),
      validateResponses: config.VALIDATE_RESPONSES,
    });
    return validation;
  };

  function opened(identity: SandboxIdentity): Promise<OpenSandbox> {
    let found = open.get(identity.id);
    if (!found) {
      found = startSandbox(options, identity, sharedValidation());
      open.set(identity.id, found);
      // A start that failed is forgotten, so the next request tries again.
      found.catch(() => open.delete(identity.id));
    }
    return found;
  }

  /** Closes the sandbox in this process (if open) and forgets it. */
  async function shut(id: string): Promise<void> {
    const found = open.get(id);
    open.delete(id);
    for (const [tag, entry] of tags) if (entry.identity?.id === id) tags.delete(tag);
    for (const [keyId, home] of keyHome) if (home.id === id) keyHome.delete(keyId);
    if (found) await (await found.catch(() => null))?.close();
  }

  /** Counts a request in, and starts the idle timer when the last one under way ends. */
  function track(sandbox: OpenSandbox, res: Response): void {
    sandbox.inFlight++;
    if (sandbox.idle) clearTimeout(sandbox.idle);
    sandbox.idle = null;
    res.once("close", () => {
      sandbox.inFlight--;
      if (sandbox.inFlight > 0) return;
      sandbox.idle = setTimeout(() => {
        if (sandbox.inFlight === 0 && open.has(sandbox.id)) {
          shut(sandbox.id).catch((err: unknown) =>
            options.logger.warn({ err, sandbox: sandbox.id }, "could not close an idle sandbox"),
          );
        }
      }, config.SANDBOX_IDLE_SECONDS * 1000);
      sandbox.idle.unref();
    });
  }

  async function identityFor(
    tag: string,
    lookup: (tag: string) => Promise<SandboxIdentity | null>,
  ): Promise<SandboxIdentity | null> {
    const at = Date.now();
    const cached = tags.get(tag);
    if (cached && cached.until > at) return cached.identity;
    const identity = await lookup(tag);
    tags.set(tag, { identity, until: at + TAG_CACHE_MS });
    // Bounded: at most the sandboxes plus the default sandbox's keys seen in the last second.
    if (tags.size > 10_000) tags.delete(tags.keys().next().value ?? tag);
    if (identity === null) {
      // Deleted (by another instance, or the CLI): a copy still open here closes.
      for (const [id, found] of open) {
        const sandbox = await found.catch(() => null);
        if (sandbox?.keyTag === tag) await shut(id);
      }
    }
    return identity;
  }

  /** The sandbox's app, with the request counted in (the idle close waits for it). */
  const served =
    (sandbox: OpenSandbox): RequestHandler =>
    (req, res, next) => {
      track(sandbox, res);
      sandbox.app(req, res, next);
    };

  /** Whether the credential is the sandbox's own (./console-routing.ts); a key's use is then recorded there. */
  const knows = async (sandbox: OpenSandbox, credential: Credential) => {
    const owned = await ownedBy(sandbox.domain, credential);
    if (owned.key) keyHome.set(owned.key.id, sandbox);
    return owned.owned;
  };

  return {
    limit: config.SANDBOX_LIMIT,

    async provision(identity, keyName) {
      const sandbox = await opened(identity);
      return sandbox.domain.serviceKeys.issue(false, { name: keyName, scopes: ["*"] });
    },

    async erase(id) {
      await shut(id);
      await eraseStore(config, id);
    },

    router(lookup) {
      const credentialFor = credentialOf({
        cookieName: consoleCookie(config.BASE_URL, config.CONSOLE_SESSION_TTL_SECONDS).name,
        bodyLimitBytes: config.BODY_LIMIT_BYTES,
        console: config.CONSOLE_ENABLED,
      });
      return frontOf({ identityFor, opened, credentialFor, knows, served, shut }, lookup);
    },

    validation(accountKeys) {
      account = accountKeys;
      return sharedValidation();
    },

    openIds: () => [...open.keys()],

    async inspect(id) {
      const found = await open.get(id)?.catch(() => null);
      return found ? { domain: found.domain, store: found.store } : null;
    },

    async close() {
      await Promise.all([...open.keys()].map((id) => shut(id)));
    },
  };
}
