import { markdown, tableOfContents, escapeHtml, BitSet, Money, CurrencyMismatchError } from '../src';
import { equal } from './assert';

export const tests = {
  'renders markdown blocks and inline markup'() {
    const html = markdown('# Intro\n\nSome *em* and **strong** with `a<b>` and [x](http://e.x).\nsame para\n\n- one\n- two\n\n1. first\n\n```ts\nconst a = 1 < 2;\n```\n\n---\n# Intro');
    equal(html.split('\n'), [
      '<h1 id="intro">Intro</h1>',
      '<p>Some <em>em</em> and <strong>strong</strong> with <code>a&lt;b&gt;</code> and <a href="http://e.x">x</a>. same para</p>',
      '<ul><li>one</li><li>two</li></ul>',
      '<ol><li>first</li></ol>',
      '<pre><code class="language-ts">const a = 1 &lt; 2;</code></pre>',
      '<hr>',
      '<h1 id="intro-2">Intro</h1>',
    ]);
    equal(tableOfContents('# A\n## B c\n### D\n#### E', 3), '- [A](#a)\n  - [B c](#b-c)\n    - [D](#d)');
    equal(escapeHtml('"<&>"'), '&quot;&lt;&amp;&gt;&quot;');
  },
  'stores bits'() {
    const a = BitSet.of(1, 5, 64);
    const b = BitSet.of(5, 6);
    equal([...a.union(b)], [1, 5, 6, 64]);
    equal([...a.intersect(b)], [5]);
    equal([a.size, a.has(64), a.delete(64), a.has(64), a.size], [3, true, true, false, 2]);
  },
  'does exact money arithmetic'() {
    const price = Money.of('19.99', 'EUR');
    equal(price.times(3).toString(), '59.97 EUR');
    equal(price.times(1, 3).toString(), '6.66 EUR');
    equal(Money.of('-0.05', 'EUR').times(1, 2).toString(), '-0.03 EUR');
    equal(Money.of(10, 'EUR').allocate(3).map(String), ['3.34 EUR', '3.33 EUR', '3.33 EUR']);
    equal(Money.sum([Money.of('0.10', 'EUR'), Money.of('0.20', 'EUR')], 'EUR').toString(), '0.30 EUR');
    let mismatch = false;
    try {
      price.plus(Money.of(1, 'USD'));
    } catch (e) {
      mismatch = e instanceof CurrencyMismatchError;
    }
    equal(mismatch, true);
  },
};
