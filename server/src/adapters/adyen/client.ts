import type { OutgoingHttpHeaders } from "node:http";
import type { FetchResponse, MaybeOptionalInit } from "openapi-fetch";
import { endpointOf, type Transport, TransportError } from "./transport.ts";

// A typed client for one of Adyen's APIs: its requests and answers are typed from Adyen's own document
// (contract/, openapi-typescript types), with openapi-fetch's types for what a call takes and gives, so a
// request that does not match Adyen's contract does not compile. The calls themselves go straight to the
// transport (./transport.ts) as JSON text, not through openapi-fetch's runtime, which builds a WHATWG
// Request, Headers and Response per call and reads the answer through a web stream: that was a good part of
// a charge's extra CPU through this connector (issue 36, "Overhead over the acquirer"). The connector only
// ever POSTs JSON with path and header parameters, which is all this client does.

/** The paths of `Paths` that have a POST operation. */
type PostPath<Paths> = {
  [P in keyof Paths]: Paths[P] extends { post: Record<string, unknown> } ? P : never;
}[keyof Paths] &
  string;

/** openapi-fetch's answer to a call (data or error, typed from the document), with the status for its Response. */
export type Answered<R> = R extends unknown ? Omit<R, "response"> & { status: number } : never;

type PostInit<Paths, P extends PostPath<Paths>> = Paths[P] extends infer Item extends { post: unknown }
  ? MaybeOptionalInit<Item, "post"> & { headers?: Record<string, string> }
  : never;

type PostAnswer<Paths, P extends PostPath<Paths>, Init> = Paths[P] extends { post: infer Operation }
  ? Operation extends Record<string | number, unknown>
    ? Answered<FetchResponse<Operation, Init, `${string}/${string}`>>
    : never
  : never;

export interface AdyenClient<Paths> {
  POST<P extends PostPath<Paths>, Init extends PostInit<Paths, P>>(
    path: P,
    init: Init,
  ): Promise<PostAnswer<Paths, P, Init>>;
}

/** What a call's options hold at run time, whatever the operation (PostInit, untyped). */
interface CallInit {
  params?: { path?: Record<string, unknown>; header?: Record<string, unknown> };
  headers?: Record<string, string>;
  body?: unknown;
}

/** The answer at run time (PostAnswer, untyped): data for a 2xx, else error. */
interface CallAnswer {
  data?: unknown;
  error?: unknown;
  status: number;
}

/**
 * A client for the API at `baseUrl`, sending `headers` (the API key) with every call. A 2xx answer's JSON
 * is `data` (none for an empty answer); any other status gives `error`, Adyen's JSON ServiceError, or its
 * text when it is not JSON. A 2xx whose body is not JSON fails as a network failure: what Adyen did is not
 * known, so the call is in doubt and is repeated under the same key.
 */
export function createAdyenClient<Paths>(
  baseUrl: string,
  headers: Record<string, string>,
  transport: Transport,
): AdyenClient<Paths> {
  const endpoint = endpointOf(baseUrl);

  async function post(path: string, init: CallInit): Promise<CallAnswer> {
    const pathParams = init.params?.path;
    const filled =
      pathParams === undefined
        ? path
        : path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(String(pathParams[name])));
    const sent: OutgoingHttpHeaders = {
      ...headers,
      "content-type": "application/json",
      ...headerParams(init.params?.header),
      ...init.headers,
    };
    const answer = await transport.send({
      method: "POST",
      endpoint,
      path: filled,
      headers: sent,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const { status } = answer;
    if (status >= 200 && status < 300) {
      if (answer.body === "") return { data: undefined, status };
      try {
        return { data: JSON.parse(answer.body), status };
      } catch (error) {
        throw new TransportError("network", `Adyen answered HTTP ${status} with a body that is not JSON`, {
          cause: error,
        });
      }
    }
    try {
      return { error: answer.body === "" ? undefined : JSON.parse(answer.body), status };
    } catch {
      return { error: answer.body, status };
    }
  }

  return {
    // `post` runs any operation's call (CallInit, CallAnswer); the typed signature is the contract's own
    // (openapi-fetch's types of Adyen's document), which `post`'s untyped one cannot state: hence the cast.
    POST: post as AdyenClient<Paths>["POST"],
  };
}

/** Header parameters as strings (the document types some as numbers or booleans). */
function headerParams(params: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (params === undefined) return out;
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== null) out[name] = String(value);
  return out;
}
