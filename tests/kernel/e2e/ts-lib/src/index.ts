export * from './core';
export * from './collections';
export * from './schema';
export * from './text';
export * from './events';
export * from './query';
export { Card, ItemList, Price, Report, h } from './ui/view';
