-- tugcode state schema on PostgreSQL, version 4: the same columns as migrations/0004_integration_target.sql
-- (docs/state.md §2, §8.4): where a plan integrates, NULL until the first run or commit that integrates it.
ALTER TABLE plans ADD COLUMN integration_kind TEXT COLLATE "C" CHECK (integration_kind IS NULL OR integration_kind IN ('local', 'remote'));
ALTER TABLE plans ADD COLUMN integration_where TEXT COLLATE "C";
