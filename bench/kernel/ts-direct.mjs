#!/usr/bin/env node
// Baseline for the kernel benchmark: a fresh node process that builds a LanguageService on the project's
// tsconfig and calls getRenameInfo + findRenameLocations at the declaration of parseConfig.
// Usage: node ts-direct.mjs DIR
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const ts = require('typescript');
const dir = process.argv[2];
const cfg = ts.getParsedCommandLineOfConfigFile(
  join(dir, 'tsconfig.json'),
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
);
const files = new Map(cfg.fileNames.map((f) => [f, ts.sys.readFile(f)]));
const host = {
  getScriptFileNames: () => cfg.fileNames,
  getScriptVersion: () => '1',
  getScriptSnapshot: (f) => {
    const t = files.get(f) ?? ts.sys.readFile(f);
    return t === undefined ? undefined : ts.ScriptSnapshot.fromString(t);
  },
  getCurrentDirectory: () => dir,
  getCompilationSettings: () => cfg.options,
  getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
  fileExists: ts.sys.fileExists,
  readFile: ts.sys.readFile,
  directoryExists: ts.sys.directoryExists,
  getDirectories: ts.sys.getDirectories,
};
const ls = ts.createLanguageService(host, ts.createDocumentRegistry());
const util = join(dir, 'src', 'util.ts');
const pos = files.get(util).indexOf('parseConfig');
const info = ls.getRenameInfo(util, pos, { allowRenameOfImportPath: false });
const locs = ls.findRenameLocations(util, pos, false, false, { providePrefixAndSuffixTextForRename: true });
process.stdout.write(JSON.stringify({ canRename: info.canRename, locations: locs.length }) + '\n');
