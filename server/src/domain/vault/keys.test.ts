import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { thrownBy } from "../../../test-support/domain.ts";
import { parseVaultKeys } from "./keys.ts";

const MASTER = randomBytes(32);
const FINGERPRINT = randomBytes(32);

describe("parseVaultKeys", () => {
  it("accepts base64 and hex keys, and gives the same keys and id for either encoding", () => {
    const fromBase64 = parseVaultKeys({
      masterKey: MASTER.toString("base64"),
      fingerprintKey: FINGERPRINT.toString("base64"),
    });
    const fromHex = parseVaultKeys({ masterKey: MASTER.toString("hex"), fingerprintKey: FINGERPRINT.toString("hex") });
    expect(fromBase64.kek.equals(MASTER)).toBe(true);
    expect(fromBase64.fingerprintKey.equals(FINGERPRINT)).toBe(true);
    expect(fromHex.kek.equals(MASTER)).toBe(true);
    expect(fromHex.fingerprintKey.equals(FINGERPRINT)).toBe(true);
    expect(fromHex.kekId).toBe(fromBase64.kekId);
  });

  it("derives the default kek id from SHA-256 of the master key's bytes", () => {
    const keys = parseVaultKeys({ masterKey: MASTER.toString("hex"), fingerprintKey: FINGERPRINT.toString("hex") });
    expect(keys.kekId).toBe(createHash("sha256").update(MASTER).digest("hex").slice(0, 8));
    expect(keys.kekId).toMatch(/^[0-9a-f]{8}$/);
  });

  it("uses a given kek id, and refuses one that is not plain", () => {
    const base = { masterKey: MASTER.toString("hex"), fingerprintKey: FINGERPRINT.toString("hex") };
    expect(parseVaultKeys({ ...base, kekId: "2026-11.primary" }).kekId).toBe("2026-11.primary");
    expect(() => parseVaultKeys({ ...base, kekId: "a:b" })).toThrow(/kekId/);
    expect(() => parseVaultKeys({ ...base, kekId: "" })).toThrow(/kekId/);
  });

  it("ignores surrounding whitespace, as left by a file or an env line", () => {
    const keys = parseVaultKeys({
      masterKey: ` ${MASTER.toString("base64")}\n`,
      fingerprintKey: FINGERPRINT.toString("hex"),
    });
    expect(keys.kek.equals(MASTER)).toBe(true);
  });

  const badValues: [string, string][] = [
    ["16 bytes of hex", randomBytes(16).toString("hex")],
    ["33 bytes of base64", randomBytes(33).toString("base64")],
    ["64 characters that are not hex", `${randomBytes(31).toString("hex")}zz`],
    ["44 characters that are not base64", `${randomBytes(32).toString("base64").slice(0, 42)}!=`],
    ["base64 without padding", randomBytes(32).toString("base64").slice(0, 43)],
    ["base64url", `${"-_".repeat(21)}A=`],
    ["an empty string", ""],
  ];
  it.each(badValues)("refuses %s for either key, naming it without echoing it", (_, value) => {
    const asMaster = thrownBy(() => parseVaultKeys({ masterKey: value, fingerprintKey: FINGERPRINT.toString("hex") }));
    expect(asMaster.message).toMatch(/master key.*64 hex characters or 44 base64 characters/);
    const asFingerprint = thrownBy(() => parseVaultKeys({ masterKey: MASTER.toString("hex"), fingerprintKey: value }));
    expect(asFingerprint.message).toMatch(/fingerprint key.*64 hex characters or 44 base64 characters/);
    if (value) {
      expect(asMaster.message).not.toContain(value);
      expect(asFingerprint.message).not.toContain(value);
    }
  });

  it("refuses the same key for both jobs, even written in two encodings", () => {
    const err = thrownBy(() =>
      parseVaultKeys({ masterKey: MASTER.toString("hex"), fingerprintKey: MASTER.toString("base64") }),
    );
    expect(err.message).toMatch(/two different keys/);
    expect(err.message).not.toContain(MASTER.toString("hex"));
  });
});
