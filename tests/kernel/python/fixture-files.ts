import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every .py file of the fixtures (the Python manifest's workspaces, and any added later). */
export function fixtureFiles(dir = 'tests/kernel/fixtures/python'): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...fixtureFiles(p));
    else if (name.endsWith('.py')) out.push(p);
  }
  return out;
}
