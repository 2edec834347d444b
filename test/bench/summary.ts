import type { TargetResult } from "./compare.ts";

// The parts of the benchmark's run (run.ts) that must survive a failing scenario: one scenario that
// throws (a server that died, a load generator that gave up) is reported as failed and the others still
// run, and a target whose figures lack a row is reported as not measured instead of ending the run
// before its summary (issue 36: `Cannot read properties of undefined (reading 'cpuUsPerRequest')`).
// Pure, so it is unit tested (summary.test.ts) without running the benchmark.

/** A scenario that threw instead of giving a row. */
export interface ScenarioFailure {
  scenario: string;
  error: string;
}

/**
 * Measures each scenario in turn with `measure`; a scenario that throws is recorded in `failures`
 * (and `onFailure` is told, to stop its server) and the next one runs.
 */
export async function measureEach<S extends { name: string }, R>(
  scenarios: readonly S[],
  measure: (scenario: S, index: number) => Promise<R>,
  onFailure: (scenario: S, index: number, error: unknown) => Promise<void> | void = () => {},
): Promise<{ rows: R[]; failures: ScenarioFailure[] }> {
  const rows: R[] = [];
  const failures: ScenarioFailure[] = [];
  for (const [i, scenario] of scenarios.entries()) {
    try {
      rows.push(await measure(scenario, i));
    } catch (error) {
      failures.push({ scenario: scenario.name, error: error instanceof Error ? error.message : String(error) });
      await onFailure(scenario, i, error);
    }
  }
  return { rows, failures };
}

/** What a target computes its figures from: a row by scenario id (throws for a row this run lacks). */
export type RowOf<Row> = (id: string) => Row;

export interface TargetSpecOf<Row, Startup> {
  text: string;
  needs: string[];
  value: (row: RowOf<Row>, startup: Startup, has: (id: string) => boolean) => number | null;
  byCpu?: (row: RowOf<Row>) => number | null;
  unit: TargetResult["unit"];
  met?: (value: number) => boolean;
  detail?: (row: RowOf<Row>) => string;
}

/**
 * Every target's result from the rows this run has. A target lacking a row it declares is "missing"; one
 * whose figures read another row this run lacks, or that throws, is not measured (value null), with why
 * in its detail: never an exception that loses the rest of the summary.
 */
export function evaluateTargets<Row, Startup>(
  specs: readonly TargetSpecOf<Row, Startup>[],
  rows: ReadonlyMap<string, Row>,
  startup: Startup,
): TargetResult[] {
  const row: RowOf<Row> = (id) => {
    const found = rows.get(id);
    if (found === undefined) throw new Error(`no row ${id} in this run`);
    return found;
  };
  const has = (id: string) => rows.has(id);
  return specs.map((t) => {
    const missing = t.needs.filter((id) => !rows.has(id));
    if (missing.length > 0) return { target: t.text, value: null, unit: t.unit, met: null, missing };
    try {
      const value = t.value(row, startup, has);
      let detail: string | undefined;
      try {
        detail = t.detail?.(row);
      } catch (error) {
        detail = `figures behind it not available: ${error instanceof Error ? error.message : String(error)}`;
      }
      return {
        target: t.text,
        value,
        unit: t.unit,
        met: value === null || t.met === undefined ? null : t.met(value),
        ...(t.met === undefined ? { reportOnly: true } : {}),
        ...(t.byCpu ? { byCpu: t.byCpu(row) } : {}),
        ...(detail === undefined ? {} : { detail }),
      };
    } catch (error) {
      return {
        target: t.text,
        value: null,
        unit: t.unit,
        met: null,
        detail: `not measured: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  });
}
