// The Adyen stand-in (../../support/adyen-stand-in/stand-in.ts) as a process of its own, for the bench's
// adyen-charges row (../launch.ts startAdyenTarget). In the bench's own process it shared one core with
// the load generator, which then sent fewer charges than the server could take: the server's CPU per
// charge was measured below saturation, where its fixed costs per second and its smaller group commits
// are shared by fewer charges than on the simulator's row (issue 36, "Overhead over the acquirer"). Its
// CPU is not the server's, and is not counted. Credentials come from the environment (BENCH_ADYEN_*).
import { startAdyenStandIn } from "../../support/adyen-stand-in/stand-in.ts";
import { exitWithParent, type ReadyMessage } from "./protocol.ts";

const env = (name: string) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const standIn = await startAdyenStandIn({
  apiKey: env("BENCH_ADYEN_API_KEY"),
  merchantAccount: env("BENCH_ADYEN_MERCHANT_ACCOUNT"),
  hmacKey: env("BENCH_ADYEN_HMAC_KEY"),
});
// Every payment queues its AUTHORISATION notification, which the bench never delivers: dropped, so the
// queue does not grow with the run.
setInterval(() => standIn.takeNotifications(), 1_000).unref();
const ready: ReadyMessage = { type: "ready", url: standIn.url };
process.send?.(ready);
exitWithParent(() => standIn.stop());
