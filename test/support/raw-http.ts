import net from "node:net";

// An HTTP/1.1 request written byte by byte on a socket, for the shapes no fetch() can send: curl's
// `-X POST -H 'Content-Type: application/json'` without `-d` sends neither Content-Length nor a chunked
// body (fetch and Node's http.request always frame a body, even an empty one). The answer comes back
// as a fetch Response, so the contract checker (support/openapi.ts) reads it like any other.

export interface RawRequest {
  method: string;
  /** The request target: path and query, as sent. */
  target: string;
  headers: Record<string, string>;
  /** The body's bytes, sent with a Content-Length; undefined: no body and no Content-Length at all. */
  body?: string;
}

/** Sends `request` to the server at `baseUrl` on a fresh connection and reads its whole answer. */
export function rawRequest(baseUrl: string, request: RawRequest): Promise<Response> {
  const { hostname, port } = new URL(baseUrl);
  const lines = [`${request.method} ${request.target} HTTP/1.1`, `Host: ${hostname}:${port}`, "Connection: close"];
  for (const [name, value] of Object.entries(request.headers)) lines.push(`${name}: ${value}`);
  if (request.body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(request.body)}`);
  const text = `${lines.join("\r\n")}\r\n\r\n${request.body ?? ""}`;
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname.replace(/^\[|\]$/g, ""));
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      if (error) return reject(error);
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (e) {
        reject(e);
      }
    };
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      // An event stream that follows new events never ends: its head is all the answer there is to read.
      const head = Buffer.concat(chunks).toString("latin1");
      if (/\r\ncontent-type: text\/event-stream/i.test(head.split("\r\n\r\n")[0] ?? "") && head.includes("\r\n\r\n")) {
        finish();
      }
    });
    socket.on("end", () => finish());
    socket.on("error", (e) => finish(e));
    socket.write(text);
  });
}

/** A whole HTTP/1.1 answer (chunked or not) as a fetch Response. */
function parseResponse(bytes: Buffer): Response {
  const split = bytes.indexOf("\r\n\r\n");
  if (split < 0)
    throw new Error(`no complete answer head in ${JSON.stringify(bytes.toString("latin1").slice(0, 200))}`);
  const [statusLine, ...headerLines] = bytes.subarray(0, split).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? "")?.[1]);
  const headers = new Headers();
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  let body = bytes.subarray(split + 4);
  if (headers.get("transfer-encoding")?.toLowerCase() === "chunked") body = unchunk(body);
  headers.delete("transfer-encoding");
  return new Response(status === 204 || status === 304 ? null : new Uint8Array(body), { status, headers });
}

/** The payload of a chunked body (as much of it as arrived: a followed event stream is cut short). */
function unchunk(bytes: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf("\r\n", at);
    if (lineEnd < 0) break;
    const size = Number.parseInt(bytes.subarray(at, lineEnd).toString("latin1"), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
