#!/usr/bin/env node
// The deterministic implementer of `tugcode demo` (06-run.md §2, §4). Part of the package; used only by the
// demo and tests. It makes a step's edit in the worktree by copying the step's files from demo/steps/<step>/
// (whole files, so running it twice changes nothing). Run for a step with substeps, it makes the
// substeps' edits first, then the step's own. The refactor step (step-5) has no files: the kernel did the
// work before the implementer ran.
//
// Input: the step brief as JSON on stdin (or in the file TUG_STEP_JSON names), TUG_STEP (wins over the
// brief's step_anchor) and TUG_WORKTREE (default: the current directory).
// Flags (for tests and a slower, watchable demo):
//   --delay-ms N          sleep N ms before editing
//   --fail STEP[@N]       exit 1 without editing for STEP (only on attempt N when given); repeatable
//   --record FILE         append {step, attempt, worktree, saw} as one JSON line to FILE, `saw` being the
//                         files under src/ before the edit (what the step's dependencies left)
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const STEP_FILES = join(HERE, 'steps');

/** The files each step writes (copied from demo/steps/<step>/), and each step's substeps. */
const STEPS = {
  'step-1': { files: ['src/price.ts'] },
  'step-2': { files: ['src/cart.ts'] },
  'step-3': { files: ['src/format.ts'] },
  'step-4': { files: ['src/receipt.ts'], substeps: ['step-4-1'] },
  'step-4-1': { files: ['src/header.ts'] },
  'step-5': { files: [], kernel: 'rename-symbol formatCents → formatPrice' },
  'step-6': { files: ['src/main.ts'] },
  'step-7': { files: ['README.md'] },
};

function parseArgs(argv) {
  const o = { delayMs: 0, fail: [], record: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) die(2, `${a} needs a value`);
      return v;
    };
    if (a === '--delay-ms') o.delayMs = Number(value());
    else if (a === '--fail') o.fail.push(value());
    else if (a === '--record') o.record = value();
    else die(2, `unknown argument ${a}`);
  }
  if (!Number.isFinite(o.delayMs) || o.delayMs < 0) die(2, '--delay-ms needs a number ≥ 0');
  return o;
}

function die(code, message) {
  process.stderr.write(`demo implementer: ${message}\n`);
  process.exit(code);
}

function readBrief() {
  let text = '';
  if (!process.stdin.isTTY) {
    try {
      text = readFileSync(0, 'utf8');
    } catch {
      text = '';
    }
  }
  if (text.trim() === '' && process.env.TUG_STEP_JSON) text = readFileSync(process.env.TUG_STEP_JSON, 'utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch (e) {
    return die(2, `the step brief is not JSON: ${e.message}`);
  }
}

/** The step's substeps (from the table and from the brief), deepest first, then the step itself. */
function order(anchor, brief) {
  const out = [];
  const visit = (a, b) => {
    const fromBrief = Array.isArray(b?.substeps) ? b.substeps : [];
    const kids = [...(STEPS[a]?.substeps ?? [])];
    for (const s of fromBrief)
      if (s && typeof s.step_anchor === 'string' && !kids.includes(s.step_anchor)) kids.push(s.step_anchor);
    for (const k of kids)
      visit(
        k,
        fromBrief.find((s) => s?.step_anchor === k),
      );
    if (!out.includes(a)) out.push(a);
  };
  visit(anchor, brief);
  return out;
}

function listFiles(dir, root = dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(join(dir, e.name), root) : [relative(root, join(dir, e.name))]))
    .map((p) => p.split('\\').join('/'))
    .sort();
}

const opts = parseArgs(process.argv.slice(2));
const brief = readBrief();
const step = process.env.TUG_STEP || brief.step_anchor;
if (!step) die(2, 'no step: set TUG_STEP or pass a brief with step_anchor on stdin');
const attempt = Number(process.env.TUG_ATTEMPT || brief.attempt || 1);
const worktree = process.env.TUG_WORKTREE || process.cwd();
const anchors = order(step, brief);
const unknown = anchors.filter((a) => !(a in STEPS));
if (unknown.length > 0)
  die(2, `unknown step ${unknown.join(', ')} (this implementer knows ${Object.keys(STEPS).join(', ')})`);

if (opts.record) {
  const saw = listFiles(join(worktree, 'src')).map((p) => `src/${p}`);
  appendFileSync(opts.record, JSON.stringify({ step, attempt, worktree, saw }) + '\n');
}
if (opts.delayMs > 0) await new Promise((r) => setTimeout(r, opts.delayMs));
for (const f of opts.fail) {
  const [a, n] = f.split('@');
  if (a === step && (n === undefined || Number(n) === attempt))
    die(1, `${step} attempt ${attempt}: failing as asked (--fail ${f})`);
}

for (const a of anchors) {
  const spec = STEPS[a];
  if (spec.kernel) console.log(`demo implementer: ${a}: nothing to do, the kernel did the work (${spec.kernel})`);
  for (const file of spec.files) {
    const text = readFileSync(join(STEP_FILES, a, file), 'utf8');
    const target = join(worktree, file);
    if (existsSync(target) && readFileSync(target, 'utf8') === text) {
      console.log(`demo implementer: ${a}: ${file} already up to date`);
      continue;
    }
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
    console.log(`demo implementer: ${a}: wrote ${file}`);
  }
}
