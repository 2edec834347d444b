import type { HandlerKit, Handlers } from "../kernel/operations.ts";
import * as serialize from "./serialize.ts";
import type { Tokens } from "./tokens.ts";

// The vault (spec/resources/tokens.tsp): createToken needs scope `tokenization`, the rest `vault`.

export function vaultHandlers({ tokens }: { tokens: Tokens }, { answer }: HandlerKit) {
  return {
    // createToken answers 200, not 201: a fixed fact of this API (spec/resources/tokens.tsp).
    createToken: answer(200, serialize.token, ({ caller, body }) => tokens.create(caller, body)),
    getToken: async ({ caller, path }) => ({ status: 200, body: serialize.token(await tokens.get(caller, path.id)) }),
    deleteToken: async ({ caller, path }) => ({
      status: 200,
      body: serialize.deletedToken(await tokens.delete(caller, path.id)),
    }),
    revealToken: answer(200, serialize.tokenReveal, ({ caller, path }) => tokens.reveal(caller, path.id)),
  } satisfies Partial<Handlers>;
}
