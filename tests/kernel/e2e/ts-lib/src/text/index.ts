export { formatValue, pad, table } from './format';
export { slugify, describeList } from './slug';
export { wrap, justify, indent, dedent, truncate } from './wrap';
export { parseCsv, toCsv, csvRecords, CsvError, type CsvCell } from './csv';
export { Template, TemplateError, render, type Filter } from './template';
export { markdown, tableOfContents, inline, escapeHtml, blocks, type MarkdownOptions } from './markdown';
