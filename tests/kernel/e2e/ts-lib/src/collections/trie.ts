interface TrieNode<V> {
  children: Map<string, TrieNode<V>>;
  value: V | undefined;
  terminal: boolean;
}

const node = <V>(): TrieNode<V> => ({ children: new Map(), value: undefined, terminal: false });

/** A prefix tree from strings to values. */
export class Trie<V> {
  private readonly root: TrieNode<V> = node();
  private count = 0;

  get size(): number {
    return this.count;
  }

  set(key: string, value: V): this {
    let cur = this.root;
    for (const ch of key) {
      let next = cur.children.get(ch);
      if (!next) cur.children.set(ch, (next = node()));
      cur = next;
    }
    if (!cur.terminal) this.count++;
    cur.terminal = true;
    cur.value = value;
    return this;
  }

  get(key: string): V | undefined {
    const n = this.find(key);
    return n?.terminal ? n.value : undefined;
  }

  has(key: string): boolean {
    return this.find(key)?.terminal ?? false;
  }

  delete(key: string): boolean {
    const n = this.find(key);
    if (!n?.terminal) return false;
    n.terminal = false;
    n.value = undefined;
    this.count--;
    return true;
  }

  /** Every key with the prefix, sorted, with its value. */
  withPrefix(prefix: string): [string, V][] {
    const start = this.find(prefix);
    const out: [string, V][] = [];
    const walk = (n: TrieNode<V>, acc: string) => {
      if (n.terminal) out.push([acc, n.value as V]);
      for (const ch of [...n.children.keys()].sort()) walk(n.children.get(ch)!, acc + ch);
    };
    if (start) walk(start, prefix);
    return out;
  }

  /** The longest stored key that is a prefix of `text`. */
  longestPrefixOf(text: string): string | undefined {
    let cur: TrieNode<V> | undefined = this.root;
    let best: string | undefined;
    let acc = '';
    if (cur.terminal) best = '';
    for (const ch of text) {
      cur = cur.children.get(ch);
      if (!cur) break;
      acc += ch;
      if (cur.terminal) best = acc;
    }
    return best;
  }

  private find(key: string): TrieNode<V> | undefined {
    let cur: TrieNode<V> | undefined = this.root;
    for (const ch of key) {
      cur = cur.children.get(ch);
      if (!cur) return undefined;
    }
    return cur;
  }
}
