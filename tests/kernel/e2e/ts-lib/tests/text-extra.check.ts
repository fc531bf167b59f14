import { wrap, justify, indent, dedent, truncate, parseCsv, toCsv, csvRecords, CsvError, Template, TemplateError, render } from '../src';
import { equal } from './assert';

export const tests = {
  'wraps and justifies'() {
    equal(wrap('the quick brown fox jumps', 10), ['the quick', 'brown fox', 'jumps']);
    equal(wrap('abcdefghij', 4), ['abcd', 'efgh', 'ij']);
    equal(justify('a bb ccc dd', 7), ['a    bb', 'ccc dd ']);
    equal(indent('a\n\nb', 2), '  a\n\n  b');
    equal(dedent('    x\n      y'), 'x\n  y');
    equal(truncate('hello wonderful world', 18), 'hello wonderful…');
    equal(truncate('abcdefghij', 5), 'abcd…');
  },
  'round-trips csv'() {
    const rows = parseCsv('name,note\r\n"Ada, L.","said ""hi"""\r\nBob,\n');
    equal(rows, [['name', 'note'], ['Ada, L.', 'said "hi"'], ['Bob', '']]);
    equal(toCsv([['x', 1.5, ['a', 'b'], null]]), 'x,1.50,a; b,\r\n');
    equal(csvRecords('a,b\n1,2\n'), [{ a: '1', b: '2' }]);
    let line = 0;
    try {
      csvRecords('a,b\n1\n');
    } catch (e) {
      if (e instanceof CsvError) line = e.line;
    }
    equal(line, 2);
  },
  'renders templates'() {
    const t = new Template('{{#each items as it}}[{{ it.name | upper }} {{ it.price | money }}]{{/each}}{{#if empty}}none{{else}}!{{/if}}');
    equal(t.render({ items: [{ name: 'a', price: 1 }, { name: 'b', price: 2.5 }], empty: [] }), '[A 1.00][B 2.50]!');
    equal(render('{{ tags | list }} ({{ tags | count }})', { tags: ['x', 'y'] }), 'x, y (2)');
    equal(new Template('{{ n | twice }}', { twice: (v) => Number(v) * 2 }).render({ n: 4 }), '8');
    let bad = false;
    try {
      new Template('{{#if x}}unclosed');
    } catch (e) {
      bad = e instanceof TemplateError;
    }
    equal(bad, true);
  },
};
