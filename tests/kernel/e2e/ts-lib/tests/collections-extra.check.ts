import { PriorityQueue, smallest, Trie, Graph, CycleError, MultiMap, frequencies, IntervalSet } from '../src';
import { equal } from './assert';

export const tests = {
  'orders a priority queue stably'() {
    const q = PriorityQueue.by<{ k: number; v: string }>((x) => x.k);
    for (const [k, v] of [[3, 'a'], [1, 'b'], [3, 'c'], [2, 'd']] as const) q.push({ k, v });
    equal(q.drain().map((x) => x.v), ['b', 'd', 'a', 'c']);
    equal(smallest([5, 3, 9, 1], 2, (x) => x), [1, 3]);
  },
  'finds prefixes in a trie'() {
    const t = new Trie<number>().set('car', 1).set('cart', 2).set('cat', 3);
    equal(t.withPrefix('car'), [['car', 1], ['cart', 2]]);
    equal(t.longestPrefixOf('carton'), 'cart');
    equal([t.delete('car'), t.has('car'), t.size], [true, false, 2]);
  },
  'sorts a graph and finds shortest paths'() {
    const g = new Graph().addEdge('b', 'c').addEdge('a', 'b').addEdge('a', 'c', 5);
    equal(g.topologicalOrder(), ['a', 'b', 'c']);
    equal(g.shortestPaths('a').get('c'), { distance: 2, path: ['a', 'b', 'c'] });
    g.addEdge('c', 'a');
    let cycle: string[] = [];
    try {
      g.topologicalOrder();
    } catch (e) {
      if (e instanceof CycleError) cycle = e.cycle;
    }
    equal(cycle, ['a', 'b', 'c', 'a']);
  },
  'groups values in a multimap'() {
    const m = MultiMap.groupBy(['apple', 'avocado', 'banana'], (w) => w[0]!);
    equal([m.get('a'), m.keyCount, m.valueCount], [['apple', 'avocado'], 2, 3]);
    equal(frequencies('abracadabra'), [['a', 5], ['b', 2], ['r', 2], ['c', 1], ['d', 1]]);
  },
  'merges and splits intervals'() {
    const set = new IntervalSet().add({ start: 0, end: 5 }).add({ start: 5, end: 8 }).add({ start: 10, end: 12 });
    equal(set.toArray(), [{ start: 0, end: 8 }, { start: 10, end: 12 }]);
    set.remove({ start: 2, end: 3 });
    equal([set.total, set.contains(2), set.contains(3), set.contains(11)], [9, false, true, true]);
    equal(set.gaps({ start: 0, end: 14 }), [{ start: 2, end: 3 }, { start: 8, end: 10 }, { start: 12, end: 14 }]);
  },
};
