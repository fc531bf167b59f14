/**
 * The page (docs/board.md §7): index.html with board.css and board.js put inline, under a Content Security
 * Policy that lets only that script and that style run (a nonce per response). The three files ship in the
 * package (dist/board/page/, copied there by the build) and are read once; nothing is fetched from elsewhere.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** `dist/board/page/` from dist/board/ and from dist/bundle/ (the same depth), `src/board/page/` under tests. */
export function pageDir(): string {
  return fileURLToPath(new URL('../board/page/', import.meta.url));
}

let files: Promise<{ html: string; css: string; js: string }> | undefined;

function load(): Promise<{ html: string; css: string; js: string }> {
  files ??= (async () => {
    const dir = pageDir();
    const [html, css, js] = await Promise.all(
      ['index.html', 'board.css', 'board.js'].map((f) => readFile(dir + f, 'utf8')),
    );
    return { html: html!, css: css!, js: js! };
  })();
  files.catch(() => (files = undefined));
  return files;
}

/** The page and its Content-Security-Policy header. */
export async function pageResponse(): Promise<{ body: string; csp: string }> {
  const { html, css, js } = await load();
  const nonce = randomBytes(16).toString('base64');
  // A replacement function: `$` in the script or the style must stay as it is.
  const body = html
    .replace('<!--style-->', () => `<style nonce="${nonce}">\n${css}</style>`)
    .replace('<!--script-->', () => `<script nonce="${nonce}">\n${js}</script>`);
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { body, csp };
}
