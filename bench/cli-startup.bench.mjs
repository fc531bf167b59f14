// Startup cost of commands that do not touch state.db, against an empty node process.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, ROOT, interleaved } from './lib.mjs';
import { tempRepo } from './state-bench-util.mjs';

export async function run() {
  const corpus = join(ROOT, 'tests', 'fixtures', 'corpus');
  let planText = '# Plan\n\n### Execution Steps\n\n#### Step 1: One\n\n**Tasks:**\n- [ ] x\n';
  try {
    planText = readFileSync(join(corpus, 'tugplan-add-tugstate.md'), 'utf8');
  } catch {
    /* corpus absent: use the tiny plan */
  }
  const repo = tempRepo({ '.tugtool/tugplan-p.md': planText });
  const m = interleaved({
    node: () => ({ argv: [process.execPath, '-e', '0'] }),
    help: () => ({ argv: [process.execPath, CLI, '--help'] }),
    validate: () => ({
      argv: [process.execPath, CLI, 'validate', 'p', '--level', 'lenient'],
      opts: { cwd: repo, allowFail: true },
    }),
  });
  return {
    name: 'startup',
    rows: [
      { metric: 'empty node process (median ms)', value: m.node.toFixed(1), unit: 'ms' },
      { metric: 'tugcode --help (median ms)', value: m.help.toFixed(1), unit: 'ms' },
      { metric: 'tugcode --help / node', value: (m.help / m.node).toFixed(2), unit: 'x' },
      { metric: 'tugcode validate <corpus plan> (median ms)', value: m.validate.toFixed(1), unit: 'ms' },
      { metric: 'tugcode validate / node', value: (m.validate / m.node).toFixed(2), unit: 'x' },
    ],
  };
}
