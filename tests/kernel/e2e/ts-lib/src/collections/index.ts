export { List } from './list';
export { LruCache } from './lru';
