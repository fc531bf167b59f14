export { List } from './list';
export { LruCache } from './lru';
export { PriorityQueue, smallest } from './heap';
export { Trie } from './trie';
export { Graph, CycleError } from './graph';
export { MultiMap, frequencies } from './multimap';
export { IntervalSet, overlaps, type Interval } from './interval';
export { BitSet } from './bitset';
