-- Categories with their evidence: every category with evidence at the blamed step and its
-- score (JSON [[category, score], ...], strongest first; `unknown` rows keep the runner-ups
-- here), and the MAST cluster of the category when several agents speak.
ALTER TABLE attributions {{ON_CLUSTER}}
    ADD COLUMN IF NOT EXISTS category_scores String DEFAULT '[]',
    ADD COLUMN IF NOT EXISTS cluster LowCardinality(String) DEFAULT '';
