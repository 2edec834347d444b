// Types for the parts of dredd 14's JavaScript API this suite uses. dredd ships no declarations; these
// follow its build/ sources (Dredd.js, TransactionRunner.js, Hooks.js, configuration/).

declare module "dredd" {
  import type { EventEmitter } from "node:events";

  export interface DreddRequest {
    method: string;
    /** The request path as compiled from the document (path parameters replaced by their `example`). */
    uri: string;
    headers: Record<string, string>;
    body: string;
  }

  export interface DreddExpected {
    /** A string: the documented status code. */
    statusCode?: string;
    headers: Record<string, string>;
    /** The documented example body, which dredd compares the real body's structure with. */
    body?: string;
    bodySchema?: unknown;
  }

  export interface DreddReal {
    statusCode: number;
    /** Lower-case names. */
    headers: Record<string, string>;
    body?: string;
    bodyEncoding?: string;
  }

  export interface DreddOrigin {
    filename: string;
    apiName: string;
    resourceGroupName: string;
    /** The path template, e.g. `/v1/merchants/{id}`. */
    resourceName: string;
    /** The method in upper case, or the operation's `summary` when it has one. */
    actionName: string;
    /** e.g. `200 > application/json`. */
    exampleName: string;
  }

  export interface DreddTest {
    title: string;
    message: string;
    status: string;
    origin?: DreddOrigin;
    request?: DreddRequest;
    expected?: DreddExpected;
    actual?: DreddReal;
    valid?: boolean;
  }

  export interface DreddTransaction {
    /** `<path template> > <METHOD> > <status> > <media type>`. */
    name: string;
    id: string;
    host: string;
    port: string;
    protocol: string;
    /** What dredd actually requests (the server URL's path joined with `request.uri`). */
    fullPath: string;
    request: DreddRequest;
    expected: DreddExpected;
    real?: DreddReal;
    origin: DreddOrigin;
    skip: boolean;
    /** Set by a hook: a string is the reason dredd reports. */
    fail?: boolean | string;
    test?: DreddTest;
  }

  /**
   * The object a hook file receives as `require("hooks")`. dredd calls a hook synchronously when it
   * declares exactly one parameter and asynchronously (with a done callback) when it declares two;
   * a hook with any other arity is never called and stalls the run.
   */
  export interface DreddHooks {
    beforeAll(hook: (transactions: DreddTransaction[]) => void): void;
    beforeEach(hook: (transaction: DreddTransaction) => void): void;
    beforeEachValidation(hook: (transaction: DreddTransaction) => void): void;
    afterEach(hook: (transaction: DreddTransaction) => void): void;
    afterAll(hook: (transactions: DreddTransaction[]) => void): void;
    before(name: string, hook: (transaction: DreddTransaction) => void): void;
    beforeValidation(name: string, hook: (transaction: DreddTransaction) => void): void;
    after(name: string, hook: (transaction: DreddTransaction) => void): void;
    log(...args: unknown[]): void;
  }

  export interface DreddStats {
    tests: number;
    failures: number;
    errors: number;
    passes: number;
    skipped: number;
    start: number;
    end: number;
    duration: number;
  }

  export interface DreddConfig {
    /** The server's base URL. */
    endpoint: string;
    /** API description documents. */
    path: string[];
    hookfiles?: string[];
    language?: "nodejs";
    emitter?: EventEmitter;
    reporter?: string[];
    loglevel?: "silent" | "error" | "warning" | "debug";
    color?: boolean;
    "inline-errors"?: boolean;
    details?: boolean;
    header?: string[];
    sorted?: boolean;
    "dry-run"?: boolean;
  }

  export default class Dredd {
    constructor(config: DreddConfig);
    run(callback: (error: Error | null | undefined, stats: DreddStats) => void): void;
  }
}
