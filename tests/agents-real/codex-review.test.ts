import { reviewSuite } from './review-suite.js';

reviewSuite('codex');
