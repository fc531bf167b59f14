#!/usr/bin/env node
// Copies the board's page (src/board/page/: index.html, board.css, board.js) to dist/board/page/, where
// src/board/page.ts reads it from both dist/board/ and dist/bundle/ (docs/board.md §7). Plain files: the
// page is browser JavaScript without a build step, and nothing of it is fetched from elsewhere at run time.
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const from = join(root, 'src', 'board', 'page');
const to = join(root, 'dist', 'board', 'page');
rmSync(to, { recursive: true, force: true });
mkdirSync(to, { recursive: true });
cpSync(from, to, { recursive: true });
