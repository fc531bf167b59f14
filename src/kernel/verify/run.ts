/**
 * Verification orchestration (docs/kernel.md §11): stages syntax → tests → typecheck, baselines for
 * diagnostic checks in `run`, fail-closed for missing verifiers, and the exit-5 error of the first failure.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { KernelError } from '../errors.js';
import { createSandbox, type Sandbox } from '../sandbox.js';
import { languageOf, type Snapshot } from '../snapshot.js';
import type { Diagnostic, Prepared, Verification, VerifyMode } from '../types.js';
import { LOOSE_TSC_FLAGS, newDiagnostics, runTsc, tsSyntaxDiagnostics } from './checks.js';
import { normalizedLines, runTypecheckCommand, type CommandBaseline } from './typecheck-command.js';
import { BaselineCache, tscVersion } from './baselines.js';
import { LangVerifier, pythonForVerify, type VerifyContext } from './langs.js';
import { check, Run, settle, testsStage, tscTargets, typecheckCommandStage } from './stages.js';

export type { VerifyContext } from './langs.js';

async function loadTs() {
  return (await import('../backends/typescript.js')).loadTs();
}

/**
 * The sandbox of one verification, and `body` run in it. Whatever `body` throws, the sandbox goes with it
 * (kept only with --keep-sandbox): a failure that is not a check's (a crashed tool, ENOSPC while the patch
 * lands) must not leave a copy of the workspace in the temp directory (docs/kernel.md §11.1). A sandbox that
 * cannot be built is VerificationUnavailable (exit 5), nothing left behind.
 */
async function inSandbox(
  ctx: VerifyContext,
  kind: 'minimal' | 'full',
  mode: VerifyMode,
  minimalFiles: Map<string, Uint8Array> | undefined,
  body: (sb: Sandbox) => Promise<Verification>,
): Promise<Verification> {
  let sb: Sandbox;
  try {
    sb = await createSandbox(ctx.workspace, kind, { ...ctx.excluded, ...ctx.bounds, minimalFiles, env: ctx.env });
  } catch (e) {
    if (e instanceof KernelError && e.exitCode === 5)
      e.extra ??= { verification: { status: 'failed', mode, sandbox: kind, checks: [] } };
    throw e;
  }
  try {
    return await body(sb);
  } catch (e) {
    sb.dispose(!!ctx.options.keepSandbox);
    throw e;
  }
}

/** Verify a prepared patch in a sandbox (run). Throws the exit-5 error of the first failing check. */
export async function verifyPatch(ctx: VerifyContext, p: Prepared, mode: VerifyMode): Promise<Verification> {
  if (mode === 'none' || p.patchSet.edits.length === 0) return { status: 'skipped', mode, sandbox: null, checks: [] };
  const changed = p.patchSet.files.map((f) => f.path);
  const minimal =
    mode === 'syntax' && changed.every((f) => languageOf(f) === 'typescript' || languageOf(f) === 'python');
  return inSandbox(ctx, minimal ? 'minimal' : 'full', mode, p.before, (sb) => verifyPatchIn(ctx, p, mode, sb));
}

async function verifyPatchIn(ctx: VerifyContext, p: Prepared, mode: VerifyMode, sb: Sandbox): Promise<Verification> {
  const changed = p.patchSet.files.map((f) => f.path);
  const tsFiles = changed.filter((f) => languageOf(f) === 'typescript');
  const r = new Run(mode, sb);
  const keep = !!ctx.options.keepSandbox;
  const names = [p.oldName ?? '', p.newName ?? ''];
  const o = ctx.options;
  // typescript (~9 MB, ~0.1 s of CPU even from the code cache) only for a patch that changes TypeScript.
  const ts = tsFiles.length > 0 ? await loadTs() : null;
  // Baselines on the unpatched content (cached per snapshot in <session>/baselines/).
  const cache = new BaselineCache(join(ctx.sessionDir, 'baselines'));
  const t0 = Date.now();
  const synBase = !ts
    ? []
    : (
        await cache.through(
          { snapshot_id: p.snapshot_id, check: 'ts-syntax', tool_version: ts.version, argv: tsFiles },
          () => ({ diagnostics: tsSyntaxDiagnostics(ts, sb.root, tsFiles, (f) => p.before.get(f)!), exit_code: null }),
        )
      ).diagnostics;
  const synBaseMs = Date.now() - t0;
  let tscBase: { targets: ReturnType<typeof tscTargets>; diags: Diagnostic[]; exit: number | null } | null = null;
  // A configured typecheck_command replaces the built-in checkers (§11.2).
  const tcCmd = mode === 'typecheck' ? o.typecheckCommand : undefined;
  let tcBase: CommandBaseline | null = null;
  if (tcCmd) {
    const b = await runTypecheckCommand(
      tcCmd,
      sb.root,
      (o.typecheckTimeoutS ?? 600) * 1000,
      (await pythonForVerify(ctx)) ?? undefined,
      ctx.env,
    );
    tcBase = { exit_code: b.spawn_error ? null : b.exit_code, lines: normalizedLines(b.output, names, sb.root) };
  }
  if (mode === 'typecheck' && ts && !tcCmd) {
    const targets = tscTargets(ts, sb.root, tsFiles);
    const runs = tscRuns(targets);
    const key = {
      snapshot_id: p.snapshot_id,
      check: 'tsc',
      tool_version: tscVersion(ctx.workspace, ts.version),
      argv: runs.map((c) => (typeof c === 'string' ? c : c.join(' '))),
    };
    const base = await cache.through(key, async () => {
      const diags: Diagnostic[] = [];
      let exit: number | null = 0;
      let cacheable = true;
      for (const c of runs) {
        const res = await runTsc(sb.root, c, (o.typecheckTimeoutS ?? 600) * 1000, ctx.env);
        diags.push(...res.diagnostics);
        if (res.proc.exit_code !== 0) exit = res.proc.exit_code;
        if (res.proc.spawn_error || res.proc.timed_out) cacheable = false;
      }
      return { diagnostics: diags, exit_code: exit, cacheable };
    });
    tscBase = { targets, diags: base.diagnostics, exit: base.exit_code };
  }
  const langsV = new LangVerifier(ctx, sb.root, changed, mode, names, {
    baseline: true,
    typecheckCommand: !!tcCmd,
    cache: { store: cache, snapshotId: p.snapshot_id },
    writeUnpatched: (rels) => sb.writeUnpatched(rels),
  });
  await langsV.baselines();
  sb.applyPatch(p.patchSet);
  // Stage 1: syntax. The engine's writes land on disk while TypeScript parses the new bytes from memory.
  if (ts) {
    const t1 = Date.now();
    const after = tsSyntaxDiagnostics(ts, sb.root, tsFiles, (f) => sb.read(f));
    await sb.flush();
    const fresh = newDiagnostics(synBase, after, names);
    const c = check('ts-syntax', {
      language: 'typescript',
      status: fresh.length ? 'failed' : 'passed',
      duration_ms: synBaseMs + Date.now() - t1,
      baseline: { diagnostics: synBase.length },
      diagnostics: fresh,
    });
    r.checks.push(c);
    if (fresh.length) r.fail('SyntaxError', `${fresh.length} new syntax error(s)`, { errors: c.diagnostics }, keep);
  }
  await sb.flush();
  for await (const res of langsV.syntax()) settle(r, res, keep);
  if (mode === 'tests' || mode === 'typecheck') await testsStage(r, ctx, sb.root, keep, changed);
  if (tcCmd)
    typecheckCommandStage(
      r,
      tcCmd,
      tcBase,
      await runTypecheckCommand(
        tcCmd,
        sb.root,
        (o.typecheckTimeoutS ?? 600) * 1000,
        (await pythonForVerify(ctx)) ?? undefined,
        ctx.env,
      ),
      names,
      sb.root,
      keep,
    );
  if (mode === 'typecheck' && tscBase) {
    const targets = tscBase.targets;
    if (!targets)
      return r.unavailable(
        check('tsc', {
          language: 'typescript',
          status: 'unavailable',
          reason: 'no tsconfig.json for the changed files',
        }),
        'tsc',
        keep,
      );
    const t2 = Date.now();
    const after: Diagnostic[] = [];
    let out = '';
    let exit: number | null = 0;
    for (const c of tscRuns(targets)) {
      const res = await runTsc(sb.root, c, (o.typecheckTimeoutS ?? 600) * 1000, ctx.env);
      if (res.proc.spawn_error)
        r.unavailable(
          check('tsc', { language: 'typescript', status: 'unavailable', reason: res.proc.spawn_error }),
          'tsc',
          keep,
        );
      after.push(...res.diagnostics);
      out += res.proc.output;
      if (res.proc.exit_code !== 0) exit = res.proc.exit_code;
    }
    const fresh = newDiagnostics(tscBase.diags, after, names);
    // One check for every tsc run: the configs, then the loose files with the inferred options (§11.2).
    const command = ['tsc', '--noEmit', '--pretty', 'false'];
    if (targets.cfgs.length) command.push('-p', targets.cfgs.join(','));
    if (targets.loose.length) command.push(...LOOSE_TSC_FLAGS, ...targets.loose);
    const c = check('tsc', {
      language: 'typescript',
      status: fresh.length ? 'failed' : 'passed',
      command,
      exit_code: exit,
      duration_ms: Date.now() - t2,
      baseline: { diagnostics: tscBase.diags.length },
      diagnostics: fresh,
      output: out.slice(-16384) || null,
    });
    r.checks.push(c);
    if (fresh.length)
      r.fail(
        'TypecheckFailed',
        `${fresh.length} new type error(s)`,
        { errors: c.diagnostics, baseline_count: tscBase.diags.length, new_count: fresh.length },
        keep,
      );
  }
  if (mode === 'typecheck') for await (const res of langsV.typecheck()) settle(r, res, keep);
  sb.dispose(keep);
  return r.verification('passed');
}

/** The tsc runs of tscTargets: each config, then the loose files together. */
function tscRuns(t: ReturnType<typeof tscTargets>): (string | string[])[] {
  if (!t) return [];
  return [...t.cfgs, ...(t.loose.length ? [t.loose] : [])];
}

/** Verify the current content (verify command): a full sandbox, no baseline, any diagnostic fails. */
export function verifyWorkspace(
  ctx: VerifyContext,
  snap: Snapshot,
  mode: 'syntax' | 'tests' | 'typecheck',
): Promise<Verification> {
  return inSandbox(ctx, 'full', mode, undefined, (sb) => verifyWorkspaceIn(ctx, snap, mode, sb));
}

async function verifyWorkspaceIn(
  ctx: VerifyContext,
  snap: Snapshot,
  mode: 'syntax' | 'tests' | 'typecheck',
  sb: Sandbox,
): Promise<Verification> {
  const r = new Run(mode, sb);
  const keep = !!ctx.options.keepSandbox;
  const ts = await loadTs();
  const tsFiles = [...snap.files.keys()].filter((f) => languageOf(f) === 'typescript');
  if (tsFiles.length > 0) {
    const t0 = Date.now();
    const d = tsSyntaxDiagnostics(ts, sb.root, tsFiles);
    const c = check('ts-syntax', {
      language: 'typescript',
      status: d.length ? 'failed' : 'passed',
      duration_ms: Date.now() - t0,
      diagnostics: d,
    });
    r.checks.push(c);
    if (d.length) r.fail('SyntaxError', `${d.length} syntax error(s)`, { errors: c.diagnostics }, keep);
  }
  const allFiles = [...snap.files.keys()];
  const langsV = new LangVerifier(ctx, sb.root, allFiles, mode, [], {
    baseline: false,
    typecheckCommand: mode === 'typecheck' && !!ctx.options.typecheckCommand,
  });
  for await (const res of langsV.syntax()) settle(r, res, keep);
  if (mode === 'tests' || mode === 'typecheck') await testsStage(r, ctx, sb.root, keep, allFiles);
  const tcCmd = mode === 'typecheck' ? ctx.options.typecheckCommand : undefined;
  if (tcCmd) {
    const t = ctx.options.typecheckTimeoutS ?? 600;
    typecheckCommandStage(
      r,
      tcCmd,
      null,
      await runTypecheckCommand(tcCmd, sb.root, t * 1000, (await pythonForVerify(ctx)) ?? undefined, ctx.env),
      [],
      sb.root,
      keep,
    );
  } else if (mode === 'typecheck' && tsFiles.length > 0) {
    if (!existsSync(join(sb.root, 'tsconfig.json')))
      r.unavailable(
        check('tsc', {
          language: 'typescript',
          status: 'unavailable',
          reason: 'no tsconfig.json at the workspace root',
        }),
        'tsc',
        keep,
      );
    const t1 = Date.now();
    const res = await runTsc(sb.root, 'tsconfig.json', (ctx.options.typecheckTimeoutS ?? 600) * 1000, ctx.env);
    const failed = res.proc.exit_code !== 0 || res.diagnostics.length > 0;
    const c = check('tsc', {
      language: 'typescript',
      status: failed ? 'failed' : 'passed',
      command: ['tsc', '--noEmit', '--pretty', 'false', '-p', 'tsconfig.json'],
      exit_code: res.proc.exit_code,
      duration_ms: Date.now() - t1,
      diagnostics: res.diagnostics,
      output: res.proc.output || null,
    });
    r.checks.push(c);
    if (failed)
      r.fail(
        'TypecheckFailed',
        `${res.diagnostics.length} type error(s)`,
        { errors: c.diagnostics, baseline_count: 0, new_count: res.diagnostics.length },
        keep,
      );
  }
  if (mode === 'typecheck') for await (const res of langsV.typecheck()) settle(r, res, keep);
  sb.dispose(keep);
  return r.verification('passed');
}
