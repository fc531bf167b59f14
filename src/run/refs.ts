/**
 * A branch tip read from the ref files themselves (loose ref, then packed-refs): the driver reads the
 * integration tip and the base tip around every step, and a git process for each read cost ~6 ms. The
 * reader lives with the other file readers of the git flows (src/git/ref-files.ts).
 */
export { refTip } from '../git/ref-files.js';
