/**
 * tugcode's version: what `--version` prints and the MCP server announces. package.json carries the same
 * string for npm; tests/contract/version.test.ts keeps the two equal. A constant, not a read of
 * package.json, so no command pays a file read at start-up.
 */
export const VERSION = '0.1.0';
