import { describe, expect, it } from 'vitest';
import { packagesLoaded } from '../helpers/imports.js';
import { tempDir } from '../helpers/repo.js';

describe('startup', () => {
  it('loads nothing heavy for --help', () => {
    const loaded = packagesLoaded(['--help'], tempDir());
    expect([...loaded].sort()).toEqual(['commander']);
  });
});
