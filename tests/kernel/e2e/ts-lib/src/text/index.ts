export { formatValue, pad, table } from './format';
export { slugify, describeList } from './slug';
