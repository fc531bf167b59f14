/**
 * TypeScript projects for the in-process backend (docs/kernel.md §6.2): tsconfig discovery, the inferred
 * project, and a LanguageServiceHost over the kernel's in-memory texts (BOM-stripped, versioned by hash).
 */
import type * as TS from 'typescript';
import { dirname, relative, resolve, sep } from 'node:path';
import type { WorkspaceView } from './types.js';

export type TsModule = typeof TS;

export interface TsProject {
  key: string;
  configPath: string | null;
  ls: TS.LanguageService;
  fileNames: Set<string>;
}

export function toAbs(root: string, rel: string): string {
  if (
    rel !== '' &&
    !rel.startsWith('/') &&
    !rel.startsWith('.') &&
    !rel.includes('/.') &&
    !rel.includes('\\') &&
    sep === '/'
  )
    return `${root}/${rel}`;
  return resolve(root, rel).split(sep).join('/');
}

export function toRel(root: string, abs: string): string {
  if (abs.length > root.length && abs.startsWith(root) && abs[root.length] === '/' && !abs.includes('/.', root.length))
    return abs.slice(root.length + 1);
  return relative(root, abs).split(sep).join('/');
}

/** tsconfig*.json / jsconfig.json of the workspace (relative paths), from the view. */
export function configFiles(view: WorkspaceView): string[] {
  return [...view.texts.keys()].filter((p) => /(^|\/)(tsconfig[^/]*\.json|jsconfig\.json)$/.test(p)).sort();
}

/** Candidate config paths for a target, nearest first: tsconfig.json/jsconfig.json, then other tsconfig*.json. */
export function configCandidates(view: WorkspaceView, targetRel: string): string[] {
  const all = new Set(configFiles(view));
  const nearest: string[] = [];
  const others: string[] = [];
  let dir = dirname(targetRel);
  for (;;) {
    const prefix = dir === '.' ? '' : dir + '/';
    for (const n of ['tsconfig.json', 'jsconfig.json']) if (all.has(prefix + n)) nearest.push(prefix + n);
    for (const c of [...all].filter((c) => dirname(c) === dir && !/(^|\/)(tsconfig|jsconfig)\.json$/.test(c)).sort())
      others.push(c);
    if (dir === '.' || dir === '') break;
    dir = dirname(dir);
  }
  return [...nearest, ...others];
}

/** One document registry per process: lib files are parsed once across kernels and operations. */
let sharedRegistry: TS.DocumentRegistry | null = null;

export class ProjectHost {
  private readonly registry: TS.DocumentRegistry;
  private readonly projects = new Map<string, TsProject>();
  private readonly parsed = new Map<string, { options: TS.CompilerOptions; fileNames: string[] } | null>();
  private uncoveredFiles: Set<string> | null = null;

  constructor(
    private readonly ts: TsModule,
    private readonly view: WorkspaceView,
  ) {
    sharedRegistry ??= ts.createDocumentRegistry();
    this.registry = sharedRegistry;
  }

  private textOf(abs: string): string | undefined {
    const rel = toRel(this.view.root, abs);
    const v = this.view.texts.get(rel);
    if (v) return v.text;
    return this.ts.sys.readFile(abs);
  }

  private parseConfig(configRel: string): { options: TS.CompilerOptions; fileNames: string[] } | null {
    const ts = this.ts;
    const abs = toAbs(this.view.root, configRel);
    const host: TS.ParseConfigFileHost = {
      useCaseSensitiveFileNames: ts.sys.useCaseSensitiveFileNames,
      readDirectory: ts.sys.readDirectory,
      fileExists: (f) => this.textOf(f) !== undefined || ts.sys.fileExists(f),
      readFile: (f) => this.textOf(f),
      getCurrentDirectory: () => this.view.root,
      onUnRecoverableConfigFileDiagnostic: () => undefined,
    };
    const parsed = ts.getParsedCommandLineOfConfigFile(abs, { noEmit: true }, host);
    if (!parsed) return null;
    return { options: parsed.options, fileNames: parsed.fileNames.map((f) => f.split(sep).join('/')) };
  }

  private parsedConfig(configRel: string): { options: TS.CompilerOptions; fileNames: string[] } | null {
    if (!this.parsed.has(configRel)) this.parsed.set(configRel, this.parseConfig(configRel));
    return this.parsed.get(configRel)!;
  }

  /**
   * TypeScript/JavaScript source files that no tsconfig or jsconfig of the workspace includes (`scripts/`
   * outside `"include": ["src"]`, a loose `legacy.js`): §6.2 renames their references too. Empty when the
   * workspace has no config, since the inferred project then holds every file.
   */
  uncovered(): Set<string> {
    if (this.uncoveredFiles) return this.uncoveredFiles;
    const covered = new Set<string>();
    const configs = configFiles(this.view);
    for (const c of configs) for (const f of this.parsedConfig(c)?.fileNames ?? []) covered.add(f);
    const out = new Set<string>();
    if (configs.length > 0)
      for (const p of this.view.texts.keys())
        if (/\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/.test(p) && !covered.has(toAbs(this.view.root, p))) out.add(p);
    return (this.uncoveredFiles = out);
  }

  /**
   * The project of uncovered files (§6.2): the inferred options over `files` (relative), the modules they
   * import coming in through resolution. Cached per file list until the next reset.
   */
  uncoveredProject(files: string[]): TsProject {
    const key = `<uncovered>\0${files.join('\0')}`;
    const hit = this.projects.get(key);
    if (hit) return hit;
    const p = this.inferred();
    return this.create(key, null, { ...p, fileNames: files.map((f) => toAbs(this.view.root, f)) });
  }

  private inferred(): { options: TS.CompilerOptions; fileNames: string[] } {
    const ts = this.ts;
    const fileNames = [...this.view.texts.keys()]
      .filter((p) => /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/.test(p))
      .map((p) => toAbs(this.view.root, p));
    return {
      options: {
        allowJs: true,
        checkJs: false,
        jsx: ts.JsxEmit.Preserve,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        skipLibCheck: true,
        noEmit: true,
      },
      fileNames,
    };
  }

  private create(
    key: string,
    configPath: string | null,
    p: { options: TS.CompilerOptions; fileNames: string[] },
  ): TsProject {
    const ts = this.ts;
    const root = this.view.root;
    const files = p.fileNames;
    const host: TS.LanguageServiceHost = {
      getScriptFileNames: () => files,
      getScriptVersion: (f) => this.view.texts.get(toRel(root, f))?.version ?? '0',
      getScriptSnapshot: (f) => {
        const t = this.textOf(f);
        return t === undefined ? undefined : ts.ScriptSnapshot.fromString(t);
      },
      getCurrentDirectory: () => root,
      getCompilationSettings: () => p.options,
      getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
      fileExists: (f) => this.view.texts.has(toRel(root, f)) || ts.sys.fileExists(f),
      readFile: (f) => this.textOf(f),
      readDirectory: ts.sys.readDirectory,
      directoryExists: ts.sys.directoryExists,
      getDirectories: ts.sys.getDirectories,
      useCaseSensitiveFileNames: () => ts.sys.useCaseSensitiveFileNames,
    };
    const ls = ts.createLanguageService(host, this.registry);
    const project = { key, configPath, ls, fileNames: new Set(files) };
    this.projects.set(key, project);
    return project;
  }

  /** The project for a target file (§6.2): nearest config including it, other configs, else inferred. */
  projectFor(targetRel: string): TsProject {
    const abs = toAbs(this.view.root, targetRel);
    for (const cfg of configCandidates(this.view, targetRel)) {
      const cached = this.projects.get(cfg);
      if (cached) {
        if (cached.fileNames.has(abs)) return cached;
        continue;
      }
      const parsed = this.parsedConfig(cfg);
      if (!parsed) continue;
      if (parsed.fileNames.includes(abs)) return this.create(cfg, cfg, parsed);
    }
    return this.projects.get('<inferred>') ?? this.create('<inferred>', null, this.inferred());
  }

  /** Forget projects (the file set changed). */
  reset(): void {
    for (const p of this.projects.values()) p.ls.dispose();
    this.projects.clear();
    this.parsed.clear();
    this.uncoveredFiles = null;
  }

  dispose(): void {
    this.reset();
  }
}
