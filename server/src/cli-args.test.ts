import { OPERATIONS, SCOPES } from "@payments/contract/operations";
import { describe, expect, it } from "vitest";
import { parseCommand, USABLE_SCOPES, USAGE, UsageError } from "./cli-args.ts";

// The admin CLI's command line (test/e2e/cli.test.ts runs the CLI itself for exit codes and the store).

function refusal(argv: string[]): string {
  try {
    parseCommand(argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`${argv.join(" ")} was accepted`);
}

describe("payments-admin command line", () => {
  it("lists every command in its usage", () => {
    for (const command of ["create-key", "list-keys", "ledger verify", "help"])
      expect(USAGE).toContain(`\n  ${command}`);
  });

  it("answers help, --help and -h (also after a command) with the help command", () => {
    for (const argv of [["help"], ["--help"], ["-h"], ["create-key", "--help"]]) {
      expect(parseCommand(argv).command).toBe("help");
    }
  });

  it("offers exactly `*` and the scopes some operation of the contract uses", () => {
    const used = new Set<string>(OPERATIONS.flatMap((op) => op.scopes));
    expect([...USABLE_SCOPES].sort()).toEqual(["*", ...used].filter((s, i, all) => all.indexOf(s) === i).sort());
    expect(USAGE).toContain(`scopes: ${USABLE_SCOPES.join(", ")}`);
    for (const reserved of SCOPES.filter((s) => s !== "*" && !used.has(s))) {
      expect(refusal(["create-key", "--name", "x", "--scopes", reserved])).toMatch(
        /No operation of this API needs them/,
      );
    }
  });

  it("explains each missing or wrong argument in words", () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /missing command/],
      [["frobnicate"], /unknown command `frobnicate`/],
      [["create-key", "--scopes", "charges"], /create-key needs --name NAME/],
      [["create-key", "--name", "  ", "--scopes", "charges"], /create-key needs --name NAME/],
      [["create-key", "--name", "x"], /create-key needs --scopes: one or more of \*, /],
      [["create-key", "--name", "x", "--scopes", ","], /create-key needs --scopes/],
      [["create-key", "--name", "x", "--scopes", "charges,everything"], /unknown or unusable scope\(s\): everything/],
      [
        ["create-key", "--name", "x", "--scopes", "charges", "--expires-at", "someday"],
        /--expires-at must be an RFC 3339/,
      ],
      [["create-key", "--nmae", "x"], /Unknown option '--nmae'/],
      [["create-key", "--name"], /--name/],
      [["list-keys", "extra"], /unexpected argument\(s\) after list-keys: extra/],
      [["ledger"], /ledger needs one subcommand, verify/],
      [["ledger", "fix"], /ledger needs one subcommand, verify: `ledger verify` \(got `fix`\)/],
      [["ledger", "verify", "now"], /ledger needs one subcommand/],
    ];
    for (const [argv, message] of cases) expect(refusal(argv), argv.join(" ")).toMatch(message);
  });

  it("accepts well-formed commands", () => {
    expect(parseCommand(["ledger", "verify"])).toMatchObject({ command: "ledger" });
    expect(parseCommand(["list-keys", "--live"])).toMatchObject({ command: "list-keys", values: { live: true } });
    expect(
      parseCommand([
        "create-key",
        "--name",
        "checkout",
        "--scopes",
        "tokenization, charges",
        "--expires-at",
        "2027-01-01T00:00:00Z",
      ]),
    ).toMatchObject({ command: "create-key", values: { name: "checkout", scopes: "tokenization, charges" } });
  });
});
