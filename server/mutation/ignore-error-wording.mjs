// A Stryker ignore-plugin: leaves out mutants of an error's wording. Tests assert an error's `code` and
// `param` (what an integrator or a job acts on), never its text, so a mutant that only changes the text
// of a message tells nothing about test strength. Everything that decides *whether* an error is thrown,
// and its code and param, is still mutated. Used by stryker.config.mjs (`ignorers: ["error-wording"]`).

/** Callee name → the positions of its arguments that only feed a message. */
const MESSAGE_ARGUMENTS = new Map([
  ["DomainError", [1]], // new DomainError(code, message, { param })
  ["Error", [0]], // new Error(message): internal failures
  ["invalid", [1]], // invalid(param, message)
  ["notFound", [0, 1]], // notFound(what, id, param): "what" and "id" are only wording
  ["inEnvironment", [2, 3]], // kernel/environment inEnvironment(found, livemode, what, id, param): likewise
  ["sandboxOnly", [1, 2]], // kernel/environment sandboxOnly(livemode, what, id)
  ["loadActive", [3]], // merchants.loadActive(livemode, id, param, action): the action words the 409
  ["unauthorized", [0]], // service-keys' local unauthorized(why)
  ["open", [3]], // vault/crypto open(key, sealed, aad, what): "what" names the part in the message
  ["refusal", [1]], // charges refusal(charge, action): the action picks the sentence
  ["transition", [4]], // charges' and cashouts' (ctx.)transition(tx, record, to, set, action): passed on to refusal
  ["keyError", [1]], // http/idempotency keyError(code, message)
  ["linkUnavailable", [0]], // payment-links/usage.ts linkUnavailable(detail): the 409's wording
]);

/**
 * Functions whose local variables exist only to word a refusal (charges/state.ts, refunds.ts): their initializers are
 * ignored; the DomainError they return (its code, its param) is not.
 */
const MESSAGE_BUILDERS = new Set(["refusal", "exceedsRefundable"]);

/** `f(…)` and `ctx.f(…)` alike: the name of the function called. */
const calleeName = (callee) =>
  callee?.type === "Identifier"
    ? callee.name
    : callee?.type === "MemberExpression" && callee.property?.type === "Identifier"
      ? callee.property.name
      : undefined;

/** @type {import("@stryker-mutator/api/ignore").Ignorer} */
const errorWording = {
  shouldIgnore(path) {
    const parent = path.parentPath?.node;
    if (path.listKey === "arguments" && (parent?.type === "CallExpression" || parent?.type === "NewExpression")) {
      const name = calleeName(parent.callee);
      if (name && MESSAGE_ARGUMENTS.get(name)?.includes(path.key)) return `the wording of an error (${name})`;
    }
    if (path.key === "init" && parent?.type === "VariableDeclarator") {
      const fn = path.getFunctionParent()?.node;
      const fnName = fn?.id?.name;
      if (fnName && MESSAGE_BUILDERS.has(fnName)) return `the wording of a refusal (${fnName})`;
    }
    return undefined;
  },
};

// The shape `declareValuePlugin(PluginKind.Ignore, …)` from @stryker-mutator/api returns.
export const strykerPlugins = [{ kind: "Ignore", name: "error-wording", value: errorWording }];
