/**
 * The contract between `bench/run.ts` and a figure module. A figure declares its rows up front
 * (so a failing or pending figure still shows every row) and `run` returns raw samples; the
 * runner computes medians, p90, ratios to the baseline and whether the target is met.
 */

export type Unit = 'ms' | 'MiB' | '%' | 'MiB/s' | 'x' | 'count';

export interface Target {
  /**
   * What the target is checked against: the figure's median, its ratio to the baseline, or
   * how far its median is above the baseline's (`over`, in the row's unit).
   */
  metric: 'median' | 'ratio' | 'over';
  op: '<=' | '>=' | '<';
  value: number;
}

export interface RowSpec {
  /** Stable id, e.g. `roundtrip.engine.echo`: results.json and the quick test key on it. */
  name: string;
  unit: Unit;
  /** From the benchmark issue; null when the issue states none. */
  target: Target | null;
  /** One line for the table's notes. */
  description: string;
}

export interface Series {
  name: string;
  samples: number[];
}

export type RowStatus = 'ok' | 'pending' | 'skipped' | 'error';

/** What a figure's run reports for one declared row. */
export interface Measurement {
  row: string;
  /** The figure's own samples, in the row's unit. Omit when the row is pending or skipped. */
  samples?: number[];
  /** Baselines measured in the same run; the first is the one the ratio is against. */
  baselines?: Series[];
  /** Trials behind `samples` when they are one aggregate (a pass rate over N runs). */
  count?: number;
  /** Explicit status for a row without samples of its own. */
  status?: 'pending' | 'skipped';
  /** An error that hit only this row (the figure's other rows still count). */
  error?: string;
  note?: string;
}

export interface BenchOptions {
  quick: boolean;
  /** A private HOME for every shell the bench starts (clean startup files, no history). */
  home: string;
  /** The project root (the cwd for shells and child processes). */
  root: string;
  /** Iteration count by mode. */
  pick(full: number, quick: number): number;
  /**
   * `--soak N`: the soak figure runs N seconds with a person's terminal besides the agents (a
   * flood every `floodEveryS`, a reload every `reloadEveryS`) and writes its samples to `out`.
   */
  soak?: { seconds: number; floodEveryS: number; reloadEveryS: number; out: string };
  log(message: string): void;
}

export interface Figure {
  /** Module id, used by `--only`. */
  id: string;
  title: string;
  rows: RowSpec[];
  /** Set while the layer a figure measures does not exist yet: every row reports `pending`. */
  pending?: string;
  run?(opts: BenchOptions): Promise<Measurement[]>;
}

export interface BaselineResult {
  name: string;
  n: number;
  median: number | null;
  p90: number | null;
  ratio: number | null;
}

export interface RowResult {
  figure: string;
  name: string;
  unit: Unit;
  status: RowStatus;
  n: number;
  median: number | null;
  p90: number | null;
  min: number | null;
  max: number | null;
  baseline: string | null;
  baselineMedian: number | null;
  baselineP90: number | null;
  /** median / baseline median. */
  ratio: number | null;
  /** Every baseline measured for the row (the first is `baseline`). */
  baselines: BaselineResult[];
  target: string | null;
  meetsTarget: boolean | null;
  note: string | null;
  description: string;
}
