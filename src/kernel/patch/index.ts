export * from './ir.js';
export * from './apply.js';
export * from './diff.js';
export * from './positions.js';
