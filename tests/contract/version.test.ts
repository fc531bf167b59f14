/** The version tugcode reports (src/contract/version.ts) is package.json's. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { VERSION } from '../../src/contract/version.js';
import { ROOT } from '../helpers/cli.js';

it('reports the version of package.json', () => {
  expect(VERSION).toBe((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version);
});
