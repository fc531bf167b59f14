export * from './result';
export { AppError, ValidationError, CapacityError } from './errors';
