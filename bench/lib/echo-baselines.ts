import { BareMarkerShell } from './bare-pty.js';
import { startTmuxBaseline, type TmuxLoop } from './tmux.js';
import type { Series } from './types.js';

/**
 * The baselines of an `echo hi` round trip, measured one each per iteration of the figure's own
 * loop (interleaved, so drift on a shared machine hits every series alike): bare node-pty with a
 * prompt marker (the physical floor) and a tmux send-keys/capture-pane loop (the first
 * `tmuxIterations` only: it is slow). Without tmux the note says why and that row is left out.
 */
export class EchoBaselines {
  private readonly floor: number[] = [];
  private readonly viaTmux: number[] = [];

  private constructor(
    private readonly bare: BareMarkerShell,
    private readonly tmux: TmuxLoop | null,
    private readonly tmuxIterations: number,
  ) {}

  static async start(home: string, notes: string[], tmuxIterations: number): Promise<EchoBaselines> {
    const bare = await BareMarkerShell.start(home);
    try {
      return new EchoBaselines(bare, await startTmuxBaseline(home, notes), tmuxIterations);
    } catch (error) {
      await bare.close();
      throw error;
    }
  }

  /** The bare marker shell, for a figure that interleaves it with more series of its own. */
  get bareShell(): BareMarkerShell {
    return this.bare;
  }

  /** Iteration `i` of the figure's loop; the first `warmup` are measured and not kept. */
  async measure(i: number, warmup: number): Promise<void> {
    let t0 = performance.now();
    await this.bare.roundTrip('echo hi');
    const bareMs = performance.now() - t0;
    let tmuxMs = Number.NaN;
    if (this.tmux && i < warmup + this.tmuxIterations) {
      t0 = performance.now();
      await this.tmux.roundTrip();
      tmuxMs = performance.now() - t0;
    }
    if (i < warmup) return;
    this.floor.push(bareMs);
    if (!Number.isNaN(tmuxMs)) this.viaTmux.push(tmuxMs);
  }

  series(): Series[] {
    const baselines: Series[] = [{ name: 'bare node-pty + prompt marker', samples: this.floor }];
    if (this.tmux) baselines.push({ name: 'tmux send-keys/capture-pane', samples: this.viaTmux });
    return baselines;
  }

  async close(): Promise<void> {
    await this.bare.close();
    await this.tmux?.close();
  }
}
