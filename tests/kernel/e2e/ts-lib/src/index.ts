export * from './core';
export * from './collections';
export * from './schema';
export * from './text';
export * from './events';
export { Card, ItemList, Price, h } from './ui/view';
