export { Emitter } from './emitter';
export { Store } from './store';
