import { reviewSuite } from './review-suite.js';

reviewSuite('claude');
