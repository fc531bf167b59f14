-- Schema 2 (docs/state.md §3.11, §3.8): the `needs_human` step status and the columns of the review gate and of
-- `**Touches:**`.
ALTER TABLE steps DROP CONSTRAINT steps_status_check;
ALTER TABLE steps ADD CONSTRAINT steps_status_check
  CHECK (status IN ('pending', 'claimed', 'in_progress', 'completed', 'failed', 'needs_human'));
ALTER TABLE steps ADD COLUMN review_commit TEXT COLLATE "C";
ALTER TABLE steps ADD COLUMN human_decision TEXT COLLATE "C" CHECK (human_decision IS NULL OR human_decision = 'approved');
ALTER TABLE steps ADD COLUMN human_notes TEXT COLLATE "C";
ALTER TABLE steps ADD COLUMN touches TEXT COLLATE "C";
