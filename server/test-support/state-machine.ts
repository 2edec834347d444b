import { expect, it } from "vitest";
import type { StateMachine } from "../src/domain/kernel/state-machine.ts";

// Test support, outside src (imported only by *.test.ts): checks a machine's whole table against the
// edges a test lists by hand, so a table edited without its test (or the reverse) fails.

/**
 * One case per (from, to) pair, creation (`from` null) included: each listed edge allowed, every other
 * refused, by `can`, `start` and `step` alike.
 */
export function itHoldsTheTable<M extends string, S extends string>(
  machine: StateMachine<M, S>,
  expected: { initial: readonly S[]; edges: readonly (readonly [S, S])[] },
): void {
  const statuses = Object.keys(machine.transitions) as S[];
  for (const to of statuses) {
    const allowed = expected.initial.includes(to);
    it(`a new ${machine.name} ${allowed ? "may" : "may not"} start ${to}`, () => {
      expect(machine.can(null, to)).toBe(allowed);
      if (allowed) expect(machine.start(to)).toBe(to);
      else expect(() => machine.start(to)).toThrow(`cannot be created ${to}`);
    });
  }
  for (const from of statuses) {
    for (const to of statuses) {
      const allowed = expected.edges.some(([f, t]) => f === from && t === to);
      it(`${machine.name}: ${from} → ${to} is ${allowed ? "allowed" : "refused"}`, () => {
        expect(machine.can(from, to)).toBe(allowed);
        if (allowed) expect(machine.step(from, to)).toBe(to);
        else expect(() => machine.step(from, to)).toThrow(`cannot go from ${from} to ${to}`);
      });
    }
  }
}
