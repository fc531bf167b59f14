import { List, LruCache, CapacityError } from '../src';
import { equal } from './assert';

export const tests = {
  'builds and maps lists'() {
    equal([...List.of(1, 2, 3).map((x) => x * 2)], [2, 4, 6]);
    equal(List.of(1, 2, 3, 4).filter((x) => x % 2 === 0).size, 2);
  },
  'evicts the least recently used entry'() {
    const c = new LruCache<string, number>(2).set('a', 1).set('b', 2);
    c.get('a');
    c.set('c', 3);
    equal([c.get('a'), c.get('b'), c.get('c')], [1, undefined, 3]);
  },
  'rejects a zero capacity'() {
    let threw = false;
    try {
      new LruCache(0);
    } catch (e) {
      threw = e instanceof CapacityError;
    }
    equal(threw, true);
  },
};
