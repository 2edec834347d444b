import type * as nodeCrypto from "node:crypto";
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { SealedCard } from "./crypto.ts";
import { fingerprintPan, openPan, sealPan, type VaultKeys } from "./crypto.ts";

// Records every buffer randomBytes hands out, to check that the data key is zeroed after use.
const handedOut: Buffer[] = [];
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof nodeCrypto>();
  return {
    ...actual,
    randomBytes: (size: number) => {
      const buf = actual.randomBytes(size);
      handedOut.push(buf);
      return buf;
    },
  };
});

const PAN = "4242424242424242";
const TOKEN = "tok_7Hs2KdP9qLm3XvB8nRt5YwZc";

function newKeys(kekId = "k1"): VaultKeys {
  return { kekId, kek: randomBytes(32), fingerprintKey: randomBytes(32) };
}

/** Opens base64 nonce(12) | ciphertext | tag(16) by hand, to check the layout SealedCard documents. */
function openByHand(key: Buffer, b64: string, aad: string): Buffer {
  const bytes = Buffer.from(b64, "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, 12), { authTagLength: 16 });
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(bytes.subarray(-16));
  return Buffer.concat([decipher.update(bytes.subarray(12, -16)), decipher.final()]);
}

function flipBit(b64: string, index: number): string {
  const bytes = Buffer.from(b64, "base64");
  bytes[index] = (bytes[index] ?? 0) ^ 0x01;
  return bytes.toString("base64");
}

describe("sealPan / openPan", () => {
  let keys: VaultKeys;
  beforeEach(() => {
    keys = newKeys();
  });

  it("round-trips a card number", () => {
    const sealed = sealPan(PAN, TOKEN, keys);
    expect(sealed.kek_id).toBe("k1");
    expect(openPan(sealed, TOKEN, keys)).toBe(PAN);
  });

  it("uses the documented envelope: data key under the master key with AAD kekId:tokenId, PAN under the data key with AAD tokenId", () => {
    const sealed = sealPan(PAN, TOKEN, keys);
    const wrapped = Buffer.from(sealed.wrapped_dek, "base64");
    expect(wrapped.length).toBe(12 + 32 + 16);
    expect(Buffer.from(sealed.sealed_pan, "base64").length).toBe(12 + PAN.length + 16);
    const dek = openByHand(keys.kek, sealed.wrapped_dek, `k1:${TOKEN}`);
    expect(dek.length).toBe(32);
    expect(openByHand(dek, sealed.sealed_pan, TOKEN).toString()).toBe(PAN);
  });

  it("zeroes the clear data key once it is wrapped", () => {
    handedOut.length = 0;
    sealPan(PAN, TOKEN, keys);
    const dataKeys = handedOut.filter((b) => b.length === 32);
    expect(dataKeys).toHaveLength(1);
    expect(dataKeys[0]?.every((byte) => byte === 0)).toBe(true);
    // The nonces are not secret and are left as they were (so the check above is about the key).
    expect(handedOut.filter((b) => b.length === 12).some((b) => b.some((byte) => byte !== 0))).toBe(true);
  });

  it("seals the same number differently every time: fresh data key and nonces", () => {
    const a = sealPan(PAN, TOKEN, keys);
    const b = sealPan(PAN, TOKEN, keys);
    expect(a.wrapped_dek).not.toBe(b.wrapped_dek);
    expect(a.sealed_pan).not.toBe(b.sealed_pan);
    expect(Buffer.from(a.sealed_pan, "base64").subarray(0, 12)).not.toEqual(
      Buffer.from(b.sealed_pan, "base64").subarray(0, 12),
    );
    expect(openByHand(keys.kek, a.wrapped_dek, `k1:${TOKEN}`)).not.toEqual(
      openByHand(keys.kek, b.wrapped_dek, `k1:${TOKEN}`),
    );
  });

  it("never holds the card number or its base64 in what it stores", () => {
    const sealed = sealPan(PAN, TOKEN, keys);
    const stored = JSON.stringify(sealed);
    expect(stored).not.toContain(PAN);
    expect(stored).not.toContain(Buffer.from(PAN).toString("base64").slice(0, 20));
    expect(stored).not.toContain(PAN.slice(4, 12));
  });

  it("refuses another token's id", () => {
    const sealed = sealPan(PAN, TOKEN, keys);
    expect(() => openPan(sealed, "tok_000000000000000000000000", keys)).toThrow(/failed authentication/);
  });

  it("refuses a wrapped data key moved from another token", () => {
    const mine = sealPan(PAN, TOKEN, keys);
    const other = sealPan("5555555555554444", "tok_000000000000000000000000", keys);
    expect(() => openPan({ ...mine, wrapped_dek: other.wrapped_dek }, TOKEN, keys)).toThrow(/failed authentication/);
  });

  const fields = ["wrapped_dek", "sealed_pan"] as const;
  const parts: [string, (len: number) => number][] = [
    ["nonce", () => 3],
    ["ciphertext", () => 14],
    ["tag", (len) => len - 2],
  ];
  for (const field of fields) {
    for (const [part, at] of parts) {
      it(`detects a flipped bit in the ${part} of ${field}`, () => {
        const sealed = sealPan(PAN, TOKEN, keys);
        const len = Buffer.from(sealed[field], "base64").length;
        const tampered: SealedCard = { ...sealed, [field]: flipBit(sealed[field], at(len)) };
        expect(() => openPan(tampered, TOKEN, keys)).toThrow(/failed authentication/);
      });
    }
    it(`refuses a truncated ${field}`, () => {
      const sealed = sealPan(PAN, TOKEN, keys);
      expect(() => openPan({ ...sealed, [field]: sealed[field].slice(0, 20) }, TOKEN, keys)).toThrow(/too short/);
    });
  }

  it("refuses the wrong master key", () => {
    const sealed = sealPan(PAN, TOKEN, keys);
    expect(() => openPan(sealed, TOKEN, { ...keys, kek: randomBytes(32) })).toThrow(/failed authentication/);
  });

  it("names the master key a card needs when it is not the one given", () => {
    const sealed = sealPan(PAN, TOKEN, keys);
    expect(() => openPan(sealed, TOKEN, newKeys("k2"))).toThrow(/sealed under master key k1, but the key given is k2/);
  });

  it("opens cards sealed under an earlier master key through a key ring", () => {
    const old = keys;
    const current = newKeys("k2");
    const ring = new Map([
      [old.kekId, old],
      [current.kekId, current],
    ]);
    const lookup = (kekId: string) => {
      const found = ring.get(kekId);
      if (!found) throw new Error(`no key ${kekId}`);
      return found;
    };
    const before = sealPan(PAN, TOKEN, old);
    const after = sealPan("5555555555554444", TOKEN, current);
    expect(openPan(before, TOKEN, lookup)).toBe(PAN);
    expect(openPan(after, TOKEN, lookup)).toBe("5555555555554444");
  });

  it("refuses a record whose kek_id was edited, even when the ring hands out that id with the same key", () => {
    const sealed = sealPan(PAN, TOKEN, keys);
    const alias = (kekId: string): VaultKeys => ({ ...keys, kekId });
    expect(openPan(sealed, TOKEN, alias)).toBe(PAN);
    expect(() => openPan({ ...sealed, kek_id: "k9" }, TOKEN, alias)).toThrow(/failed authentication/);
  });
});

describe("fingerprintPan", () => {
  const keys = newKeys();

  it("matches the contract's pattern and is HMAC-SHA256 of env:pan under the fingerprint key", () => {
    const fp = fingerprintPan(PAN, false, keys);
    expect(fp).toMatch(/^fp_[0-9a-f]{32}$/);
    const expected = createHmac("sha256", keys.fingerprintKey).update(`test:${PAN}`).digest("hex").slice(0, 32);
    expect(fp).toBe(`fp_${expected}`);
  });

  it("is the same for the same card in the same environment", () => {
    expect(fingerprintPan(PAN, true, keys)).toBe(fingerprintPan(PAN, true, keys));
    expect(fingerprintPan(PAN, false, keys)).toBe(fingerprintPan(PAN, false, keys));
  });

  it("differs between test and live mode, between cards, and between fingerprint keys", () => {
    expect(fingerprintPan(PAN, true, keys)).not.toBe(fingerprintPan(PAN, false, keys));
    expect(fingerprintPan(PAN, false, keys)).not.toBe(fingerprintPan("5555555555554444", false, keys));
    expect(fingerprintPan(PAN, false, keys)).not.toBe(fingerprintPan(PAN, false, newKeys()));
  });

  it("does not depend on the master key", () => {
    expect(fingerprintPan(PAN, false, { ...keys, kek: randomBytes(32) })).toBe(fingerprintPan(PAN, false, keys));
  });
});

describe("what the layout allows and what stays in memory", () => {
  /** Seals by hand in the documented layout, to build records sealPan never makes. */
  function sealByHand(key: Buffer, plaintext: Buffer, aad: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, nonce, { authTagLength: 16 });
    cipher.setAAD(Buffer.from(aad));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([nonce, ciphertext, cipher.getAuthTag()]).toString("base64");
  }

  it("opens the shortest sealed value the layout allows: nonce and tag around an empty ciphertext", () => {
    const keys = newKeys();
    const dek = randomBytes(32);
    const sealed: SealedCard = {
      kek_id: keys.kekId,
      wrapped_dek: sealByHand(keys.kek, dek, `${keys.kekId}:${TOKEN}`),
      sealed_pan: sealByHand(dek, Buffer.alloc(0), TOKEN),
    };
    expect(Buffer.from(sealed.sealed_pan, "base64")).toHaveLength(28);
    expect(openPan(sealed, TOKEN, keys)).toBe("");
  });

  it("zeroes the clear data key and card bytes once the number is read", () => {
    const keys = newKeys();
    const sealed = sealPan(PAN, TOKEN, keys);
    const concat = vi.spyOn(Buffer, "concat");
    try {
      expect(openPan(sealed, TOKEN, keys)).toBe(PAN);
      const opened = concat.mock.results.map((r) => r.value as Buffer);
      expect(opened.map((b) => b.length).sort((a, b) => a - b)).toEqual([PAN.length, 32]);
      for (const buffer of opened) expect(buffer.every((byte) => byte === 0)).toBe(true);
    } finally {
      concat.mockRestore();
    }
  });

  it("the live fingerprint is HMAC-SHA256 of live:pan under the fingerprint key", () => {
    const keys = newKeys();
    const expected = createHmac("sha256", keys.fingerprintKey).update(`live:${PAN}`).digest("hex").slice(0, 32);
    expect(fingerprintPan(PAN, true, keys)).toBe(`fp_${expected}`);
  });
});
