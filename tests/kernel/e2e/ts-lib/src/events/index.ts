export { Emitter } from './emitter';
export { Store } from './store';
export { Bus, DeliveryError, type Message, type Handler, type Middleware } from './bus';
export { StateContainer, combineReducers, type Action, type Reducer } from './reducer';
export { Scheduler, SchedulerError, type Job } from './scheduler';
