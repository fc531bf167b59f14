-- tugcode state schema, version 4 (docs/state.md §2, §8.4): where a plan integrates, recorded by the first
-- run or commit that integrates it: `local` (the clone named by `integration_where`, its owner name) or
-- `remote` (the git remote named by `integration_where`). NULL: nothing recorded yet (a plan of an older
-- store, or one nothing integrated); the next integration records it.
ALTER TABLE plans ADD COLUMN integration_kind TEXT CHECK (integration_kind IS NULL OR integration_kind IN ('local', 'remote'));
ALTER TABLE plans ADD COLUMN integration_where TEXT;
