/**
 * The tips the run itself left on the local integration branch (docs/agents.md §1.6): the outside-write
 * check exempts that branch from the snapshot (other workers integrate while an implementer runs), so it
 * asks here instead. The driver records each tip it writes under the integration lock (integrate.ts
 * `moved`); a read of the branch is the run's own when it shows a tip written since just before the read.
 * An older tip of the run's (a reset to where the branch was) is not: the branch never goes back.
 * Not kept under `--remote`: there the integration branch is the remote's, and the local branch is a mirror
 * of each fetch (remote.ts).
 */
import type { GitRunner } from '../git/exec.js';
import { refTip } from '../git/ref-files.js';

export class IntegrationTips {
  /** Index: the generation; the last is where the run left the branch. */
  private readonly tips: string[];
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(start: string) {
    this.tips = [start];
  }

  /** The generation now: the number of tips written since the start. */
  get gen(): number {
    return this.tips.length - 1;
  }

  /** Where the run left the branch last. */
  latest(): string {
    return this.tips[this.tips.length - 1]!;
  }

  /** A tip the run wrote (or took as its own: a held step's own `tugcode commit`, outside-check.ts ownFastForward). */
  record(tip: string): void {
    if (tip !== this.latest()) this.tips.push(tip);
  }

  /** An integration under way: a read while it runs may show its tip before it is recorded. */
  track<T>(p: Promise<T>): Promise<T> {
    this.inflight.add(p);
    void p.then(
      () => this.inflight.delete(p),
      () => this.inflight.delete(p),
    );
    return p;
  }

  /**
   * The branch now, and whether the run left it there: a tip written at or after the generation taken
   * before the read (the integrations under way waited for, when it is none of them yet).
   */
  async check(
    g: GitRunner,
    commonDir: string,
    mainRoot: string,
    branch: string,
  ): Promise<{ tip: string | null; own: boolean }> {
    const from = this.gen;
    const tip = await refTip(g, commonDir, mainRoot, branch);
    const own = () => tip !== null && this.tips.slice(from).includes(tip);
    if (own()) return { tip, own: true };
    if (this.inflight.size) await Promise.allSettled([...this.inflight]);
    return { tip, own: own() };
  }
}
