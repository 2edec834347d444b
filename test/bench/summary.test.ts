import { describe, expect, it } from "vitest";
import { evaluateTargets, measureEach, type TargetSpecOf } from "./summary.ts";

// The benchmark's summary survives a failing scenario (issue 36): tested here on made-up rows, without
// running the benchmark.

interface Row {
  id: string;
  requestsPerSecond: number;
  cpuUsPerRequest: number | null;
}

describe("measureEach", () => {
  it("records a scenario that throws and still measures every other one", async () => {
    const stopped: string[] = [];
    const { rows, failures } = await measureEach(
      [{ name: "a" }, { name: "b" }, { name: "c" }],
      async (s) => {
        if (s.name === "b") throw new Error("server exited");
        return s.name;
      },
      (s) => {
        stopped.push(s.name);
      },
    );
    expect(rows).toEqual(["a", "c"]);
    expect(failures).toEqual([{ scenario: "b", error: "server exited" }]);
    expect(stopped).toEqual(["b"]);
  });
});

describe("evaluateTargets", () => {
  const rows = new Map<string, Row>([
    ["built-charges", { id: "built-charges", requestsPerSecond: 500, cpuUsPerRequest: 1000 }],
    ["bare-post", { id: "bare-post", requestsPerSecond: 3000, cpuUsPerRequest: 200 }],
  ]);
  const times = (a: Row, b: Row) => (a.cpuUsPerRequest ?? 0) / (b.cpuUsPerRequest ?? 1);
  const specs: TargetSpecOf<Row, Record<string, number>>[] = [
    {
      // Its detail reads a row it does not declare (the crash of issue 36 when "charges" had failed).
      text: "CPU per charge",
      needs: ["built-charges", "bare-post"],
      value: (r) => times(r("built-charges"), r("bare-post")),
      unit: "x",
      met: (v) => v <= 5.6,
      detail: (r) => `in-memory ${r("charges").cpuUsPerRequest}`,
    },
    {
      text: "a target whose row failed",
      needs: ["tokens"],
      value: () => 1,
      unit: "%",
      met: () => true,
    },
    {
      text: "a target that reads a missing row in its value",
      needs: [],
      value: (r) => r("charges").requestsPerSecond,
      unit: "%",
    },
  ];

  it("reports every target: measured, missing, or not measured with why; never throws", () => {
    const results = evaluateTargets(specs, rows, {});
    expect(results).toEqual([
      {
        target: "CPU per charge",
        value: 5,
        unit: "x",
        met: true,
        detail: "figures behind it not available: no row charges in this run",
      },
      { target: "a target whose row failed", value: null, unit: "%", met: null, missing: ["tokens"] },
      {
        target: "a target that reads a missing row in its value",
        value: null,
        unit: "%",
        met: null,
        detail: "not measured: no row charges in this run",
      },
    ]);
  });
});
