// A stand-in for mongod on a loopback port, speaking just enough of the wire protocol (OP_QUERY for the
// driver's first handshake, OP_MSG after it) for the MongoDB adapter's tests that need no real server:
// what the adapter says when the server it reaches is a standalone, an uninitiated member, a member of
// a set without a primary or whose member names cannot be reached; what it sends (index definitions,
// write concerns, the order of a transaction's commands); and how it reacts to a write that is never
// acknowledged. Every command is recorded and answered by the test's `answer`; `hello` by the test's
// hello document plus the fields every server sends. It knows nothing of MongoDB's semantics: tests that
// need those run against a real replica set (store.conformance.test.ts, MONGODB_URI).

import { once } from "node:events";
import { createServer, type Server, type Socket } from "node:net";
import { BSON, type Document } from "mongodb";

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;

/** What the stand-in answers to a command: a reply document, or `"hang"` to never answer it. */
export type Answer = Document | "hang";

export interface WireFake {
  /** `host:port` of the listening socket. */
  address: string;
  port: number;
  /** Every command received after the handshakes (hello and its legacy forms are left out), in order. */
  commands: Document[];
  /** The commands received whose name is `name`. */
  received(name: string): Document[];
  close(): Promise<void>;
}

export interface WireFakeOptions {
  /**
   * The server's hello reply beyond the fields every server sends (`isWritablePrimary`, `setName`,
   * `hosts`, `me`, ...). A function gets the fake's own address, for replies that name it.
   */
  hello: Document | ((address: string) => Document);
  /** Answers every other command; default `{ok: 1}`. */
  answer?: (command: Document, name: string) => Answer;
}

const BASE_HELLO = {
  // A 7.0 server: within what mongodb 7.9 supports (wire versions 9 to 29).
  maxWireVersion: 21,
  minWireVersion: 0,
  maxBsonObjectSize: 16 * 1024 * 1024,
  maxMessageSizeBytes: 48_000_000,
  maxWriteBatchSize: 100_000,
  logicalSessionTimeoutMinutes: 30,
  helloOk: true,
};

const HELLO_NAMES = new Set(["hello", "ismaster", "isMaster"]);

function header(length: number, requestId: number, responseTo: number, opCode: number): Buffer {
  const out = Buffer.alloc(16);
  out.writeInt32LE(length, 0);
  out.writeInt32LE(requestId, 4);
  out.writeInt32LE(responseTo, 8);
  out.writeInt32LE(opCode, 12);
  return out;
}

function opReply(responseTo: number, doc: Document): Buffer {
  const body = Buffer.from(BSON.serialize(doc));
  const fields = Buffer.alloc(20);
  fields.writeInt32LE(0, 0); // responseFlags
  fields.writeBigInt64LE(0n, 4); // cursorID
  fields.writeInt32LE(0, 12); // startingFrom
  fields.writeInt32LE(1, 16); // numberReturned
  return Buffer.concat([header(16 + 20 + body.length, 0, responseTo, OP_REPLY), fields, body]);
}

function opMsg(responseTo: number, doc: Document): Buffer {
  const body = Buffer.from(BSON.serialize(doc));
  const flags = Buffer.alloc(5); // flagBits 0, then section kind 0
  return Buffer.concat([header(16 + 5 + body.length, 0, responseTo, OP_MSG), flags, body]);
}

/** The command document of an OP_QUERY or OP_MSG message body (after its 16-byte header). */
function commandOf(opCode: number, body: Buffer): Document | null {
  if (opCode === OP_QUERY) {
    let at = 4; // flags
    at = body.indexOf(0, at) + 1; // fullCollectionName, a C string
    at += 8; // numberToSkip, numberToReturn
    const size = body.readInt32LE(at);
    return BSON.deserialize(body.subarray(at, at + size));
  }
  if (opCode === OP_MSG) {
    let at = 4; // flagBits
    let command: Document | null = null;
    while (at < body.length) {
      const kind = body.readUInt8(at);
      at += 1;
      const size = body.readInt32LE(at);
      if (kind === 0) command = BSON.deserialize(body.subarray(at, at + size));
      at += size;
    }
    return command;
  }
  return null;
}

export async function startWireFake(options: WireFakeOptions): Promise<WireFake> {
  const commands: Document[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let pending = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 16) {
        const length = pending.readInt32LE(0);
        if (pending.length < length) break;
        const message = pending.subarray(0, length);
        pending = pending.subarray(length);
        const requestId = message.readInt32LE(4);
        const opCode = message.readInt32LE(12);
        const command = commandOf(opCode, message.subarray(16));
        if (command === null) continue;
        const name = Object.keys(command)[0] ?? "";
        let reply: Answer;
        if (HELLO_NAMES.has(name)) {
          const own = typeof options.hello === "function" ? options.hello(address) : options.hello;
          reply = { ...BASE_HELLO, localTime: new Date(), ...own, ok: 1 };
        } else {
          commands.push(command);
          reply = options.answer?.(command, name) ?? { ok: 1 };
        }
        if (reply === "hang") continue;
        socket.write(opCode === OP_QUERY ? opReply(requestId, reply) : opMsg(requestId, reply));
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const bound = server.address();
  const port = typeof bound === "object" && bound !== null ? bound.port : 0;
  const address = `127.0.0.1:${port}`;
  return {
    address,
    port,
    commands,
    received: (name) => commands.filter((c) => Object.keys(c)[0] === name),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port nothing listens on: taken, then released. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const bound = server.address();
  const port = typeof bound === "object" && bound !== null ? bound.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
