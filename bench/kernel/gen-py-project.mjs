#!/usr/bin/env node
// Deterministic Python twin of the kernel benchmark project (docs/kernel.md §8, `--lang python`):
// pkg/util.py (parse_config, Config, Registry), pkg/__init__.py re-exporting them, and N-2 modules
// pkg/m/mod_NNN.py of ~100 lines, each importing parse_config (alternately from pkg.util and through pkg),
// importing 2 neighbouring modules, defining 3 functions and a class with 4 methods, and calling
// parse_config about 20 times (~6,000 rename locations in all).
// Usage: node gen-py-project.mjs --files 300 --seed 1 [--out DIR]  (prints the directory)
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatorMain, prng } from '../lib.mjs';

const UTIL = `"""Configuration parsing shared by every module."""


class Config:
    def __init__(self, name: str, values: dict[str, float]) -> None:
        self.name = name
        self.values = values


def parse_config(text: str) -> Config:
    values: dict[str, float] = {}
    for line in text.split("\\n"):
        k, _, v = line.partition("=")
        if k and v:
            values[k.strip()] = float(v)
    return Config("cfg", values)


class Registry:
    def __init__(self) -> None:
        self.items: dict[str, Config] = {}

    def register(self, key: str, c: Config) -> None:
        self.items[key] = c

    def lookup(self, key: str) -> Config | None:
        return self.items.get(key)
`;

export function generate({ files = 300, seed = 1, out } = {}) {
  const dir = out ?? mkdtempSync(join(tmpdir(), 'tug-bench-py-'));
  const rnd = prng(seed);
  mkdirSync(join(dir, 'pkg', 'm'), { recursive: true });
  writeFileSync(join(dir, 'pyproject.toml'), '[project]\nname = "bench-project"\nversion = "0.0.0"\n');
  writeFileSync(join(dir, 'pkg', 'util.py'), UTIL);
  writeFileSync(
    join(dir, 'pkg', '__init__.py'),
    'from .util import Config, Registry, parse_config\n\n__all__ = ["Config", "Registry", "parse_config"]\n',
  );
  writeFileSync(join(dir, 'pkg', 'm', '__init__.py'), '');
  const n = files - 3;
  const pad = (i) => String(i).padStart(3, '0');
  for (let i = 1; i <= n; i++) {
    const from = i % 2 ? 'pkg.util' : 'pkg';
    const a = ((i + n - 2) % n) + 1;
    const b = (i % n) + 1;
    const lines = [];
    lines.push(`from ${from} import parse_config, Registry`);
    lines.push('from pkg.util import Config');
    if (a !== i) lines.push(`from pkg.m.mod_${pad(a)} import fn_${pad(a)}_a`);
    if (b !== i && b !== a) lines.push(`from pkg.m.mod_${pad(b)} import fn_${pad(b)}_b`);
    lines.push('', '');
    for (const suffix of ['a', 'b', 'c']) {
      lines.push(`def fn_${pad(i)}_${suffix}(text: str) -> float:`);
      lines.push('    c: Config = parse_config(text)');
      for (let k = 0; k < 5; k++)
        lines.push(`    v${k} = parse_config(text + "${k}=${Math.floor(rnd() * 100)}").values.get("${k}", ${k})`);
      lines.push('    return len(c.values) + v0 + v1 + v2 + v3 + v4');
      lines.push('', '');
    }
    lines.push(`class Service${pad(i)}:`);
    lines.push('    def __init__(self) -> None:');
    lines.push('        self.reg = Registry()');
    for (const m of ['load', 'store', 'query', 'reset']) {
      lines.push('');
      lines.push(`    def ${m}(self, text: str) -> int:`);
      lines.push('        c = parse_config(text)');
      lines.push(`        self.reg.register("${m}", c)`);
      lines.push(`        return len(parse_config(text + "\\n${m}=1").values)`);
    }
    lines.push('', '');
    lines.push(`def run_${pad(i)}() -> float:`);
    lines.push(`    s = Service${pad(i)}()`);
    const calls = [];
    if (a !== i) calls.push(`fn_${pad(a)}_a("x=1")`);
    if (b !== i && b !== a) calls.push(`fn_${pad(b)}_b("y=2")`);
    lines.push(
      `    return s.load("a=1") + s.query("b=2") + len(parse_config("z=3").name)${calls.length ? ' + ' + calls.join(' + ') : ''}`,
    );
    while (lines.length < 100) lines.push(`# filler ${lines.length}: ${Math.floor(rnd() * 1e6)}`);
    writeFileSync(join(dir, 'pkg', 'm', `mod_${pad(i)}.py`), lines.join('\n') + '\n');
  }
  return dir;
}

generatorMain(import.meta, generate);
