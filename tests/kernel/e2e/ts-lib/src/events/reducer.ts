import { Emitter } from './emitter';

export type Action = { type: string };
export type Reducer<S, A extends Action> = (state: S, action: A) => S;

/** A reducer-driven state container with undo and change events. */
export class StateContainer<S, A extends Action> extends Emitter<{ change: { state: S; action: A } }> {
  private current: S;
  private readonly past: S[] = [];
  private readonly future: S[] = [];

  constructor(private readonly reducer: Reducer<S, A>, initial: S, private readonly historyLimit = 50) {
    super();
    this.current = initial;
  }

  get state(): S {
    return this.current;
  }

  dispatch(action: A): S {
    const next = this.reducer(this.current, action);
    if (next === this.current) return next;
    this.past.push(this.current);
    if (this.past.length > this.historyLimit) this.past.shift();
    this.future.length = 0;
    this.current = next;
    this.emit('change', { state: next, action });
    return next;
  }

  undo(): boolean {
    const prev = this.past.pop();
    if (prev === undefined) return false;
    this.future.push(this.current);
    this.current = prev;
    return true;
  }

  redo(): boolean {
    const next = this.future.pop();
    if (next === undefined) return false;
    this.past.push(this.current);
    this.current = next;
    return true;
  }
}

/** Combine reducers of a state's keys into one reducer of the whole state. */
export function combineReducers<S extends Record<string, unknown>, A extends Action>(parts: { [K in keyof S]: Reducer<S[K], A> }): Reducer<S, A> {
  return (state, action) => {
    let changed = false;
    const next = { ...state };
    for (const k of Object.keys(parts) as (keyof S)[]) {
      const v = parts[k](state[k], action);
      if (v !== state[k]) {
        next[k] = v;
        changed = true;
      }
    }
    return changed ? next : state;
  };
}
