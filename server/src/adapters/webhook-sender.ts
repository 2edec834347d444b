import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import {
  type DeliveryErrorCode,
  type DeliveryRequest,
  type DeliveryResult,
  RESPONSE_BODY_BYTES,
  type WebhookSender,
} from "../domain/webhooks/sender.ts";
import { type AddressPolicy, ipLiteral, type Resolver, refusal } from "../domain/webhooks/ssrf.ts";
import { isRecord, messageOf } from "../guards.ts";

// The webhook sender over HTTP (the port: domain/webhooks/sender.ts). What it guarantees:
// - The address policy holds on the connection itself: names are resolved through a custom `lookup`
//   that checks every address before the socket connects to one, and IP-literal hosts are checked
//   before the request, so a name that resolves differently now than at registration (DNS rebinding)
//   cannot reach a refused address. Connection pools are kept per policy, so a socket opened under the
//   sandbox's policy is never reused for a production delivery.
// - Redirects are not followed (node's http never follows them; a 3xx is an answer like any other).
// - One time limit covers the whole attempt: resolving, connecting, TLS, the status and the first
//   RESPONSE_BODY_BYTES of the body. The rest of the body is drained (up to DRAIN_LIMIT_BYTES, so the
//   connection can be reused) but not waited for.

/** Beyond this much body the connection is dropped instead of drained for reuse. */
const DRAIN_LIMIT_BYTES = 64 * 1024;
const ADDRESS_REFUSED = "ERR_WEBHOOK_ADDRESS_REFUSED";

/** The system resolver: every address of a name, in the resolver's order. */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });

/** A `lookup` for net.connect that resolves through `resolve` and refuses the name if any address is refused. */
function checkedLookup(resolve: Resolver, policy: AddressPolicy): LookupFunction {
  // @types/node types the callback's address as always given; Node's own dns.lookup calls it with the
  // error alone on a failure, as this does (hence `address?` here, and the cast to LookupFunction).
  return ((
    hostname: string,
    options: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void,
  ) => {
    resolve(hostname).then(
      (found) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const addresses = wanted ? found.filter((a) => a.family === wanted) : found;
        for (const { address } of found) {
          const why = refusal(address, policy);
          if (why !== null) {
            const err = Object.assign(new Error(`${hostname} resolves to ${why}`), { code: ADDRESS_REFUSED });
            callback(err);
            return;
          }
        }
        const [first] = addresses;
        if (first === undefined) {
          callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }));
        } else if (options.all) {
          callback(null, addresses);
        } else {
          callback(null, first.address, first.family);
        }
      },
      // A resolver rejects with an Error (the system's carries its code); anything else is said as one.
      (err: unknown) => callback(err instanceof Error ? err : new Error(messageOf(err))),
    );
  }) as LookupFunction;
}

function classify(err: unknown): DeliveryErrorCode {
  const code = isRecord(err) ? String(err.code ?? "") : "";
  if (code === ADDRESS_REFUSED) return "address_refused";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NODATA" || code === "EAI_FAIL") return "dns_error";
  if (
    code.startsWith("ERR_TLS") ||
    code.startsWith("ERR_SSL") ||
    code.includes("CERT") ||
    code === "DEPTH_ZERO_SELF_SIGNED_CERT" ||
    code === "SELF_SIGNED_CERT_IN_CHAIN" ||
    code === "UNABLE_TO_VERIFY_LEAF_SIGNATURE" ||
    code === "UNABLE_TO_GET_ISSUER_CERT_LOCALLY" ||
    code === "HOSTNAME_MISMATCH"
  ) {
    return "tls_error";
  }
  return "connection_error";
}

export interface HttpWebhookSenderOptions {
  /** Resolves host names (default: the system resolver). Tests pass their own; nothing else should. */
  resolve?: Resolver;
}

export function createHttpWebhookSender(options: HttpWebhookSenderOptions = {}): WebhookSender {
  const resolve = options.resolve ?? systemResolver;
  const pools = new Map<string, { http: http.Agent; https: https.Agent }>();
  const poolFor = (policy: AddressPolicy) => {
    let pool = pools.get(policy.name);
    if (!pool) {
      const lookup = checkedLookup(resolve, policy);
      const agent = { keepAlive: true, maxSockets: 64, maxFreeSockets: 16, lookup };
      pool = { http: new http.Agent(agent), https: new https.Agent(agent) };
      pools.set(policy.name, pool);
    }
    return pool;
  };

  return {
    send(request: DeliveryRequest): Promise<DeliveryResult> {
      const started = performance.now();
      const elapsed = () => performance.now() - started;
      const failure = (error: DeliveryErrorCode, message: string): DeliveryResult => ({
        kind: "error",
        error,
        message,
        latencyMs: elapsed(),
      });

      let url: URL;
      try {
        url = new URL(request.url);
      } catch {
        return Promise.resolve(failure("connection_error", "the endpoint URL is not valid"));
      }
      const secure = url.protocol === "https:";
      if (!secure && url.protocol !== "http:") return Promise.resolve(failure("address_refused", "not an http(s) URL"));
      if (!secure && request.policy.requireHttps) {
        return Promise.resolve(failure("address_refused", "production deliveries must use https"));
      }
      const literal = ipLiteral(url.hostname);
      if (literal !== null) {
        const why = refusal(literal, request.policy);
        if (why !== null) return Promise.resolve(failure("address_refused", why));
      }

      const pool = poolFor(request.policy);
      const body = Buffer.from(request.body, "utf8");
      return new Promise<DeliveryResult>((done) => {
        let settled = false;
        const finish = (result: DeliveryResult) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          done(result);
        };
        const req = (secure ? https : http).request({
          protocol: url.protocol,
          hostname: literal ?? url.hostname,
          port: url.port || (secure ? 443 : 80),
          path: `${url.pathname}${url.search}`,
          method: "POST",
          agent: secure ? pool.https : pool.http,
          headers: { ...request.headers, "content-length": String(body.length) },
          ...(secure && literal === null ? { servername: url.hostname } : {}),
        });
        const timer = setTimeout(() => {
          finish(failure("timeout", `no answer within ${request.timeoutMs} ms`));
          req.destroy();
        }, request.timeoutMs);

        req.on("response", (res) => {
          const status = res.statusCode ?? 0;
          const head: Buffer[] = [];
          let kept = 0;
          let total = 0;
          const answer = () =>
            finish({
              kind: "response",
              status,
              body: new TextDecoder("utf-8").decode(Buffer.concat(head)),
              latencyMs: elapsed(),
            });
          res.on("data", (chunk: Buffer) => {
            total += chunk.length;
            if (kept < RESPONSE_BODY_BYTES) {
              const part = chunk.subarray(0, RESPONSE_BODY_BYTES - kept);
              head.push(part);
              kept += part.length;
              if (kept >= RESPONSE_BODY_BYTES) answer();
            }
            if (total > DRAIN_LIMIT_BYTES) res.destroy();
          });
          res.on("end", answer);
          res.on("error", answer);
          res.on("close", answer);
        });
        req.on("error", (err) => {
          const code = classify(err);
          finish(failure(code, err.message));
        });
        req.end(body);
      });
    },

    close() {
      for (const pool of pools.values()) {
        pool.http.destroy();
        pool.https.destroy();
      }
      pools.clear();
    },
  };
}
