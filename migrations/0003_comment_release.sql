-- Comments are released as whole cells of one fixed partition: ISO week (UTC) x group, where a
-- group is one team ('team:' || id) or the pulses without a team ('none'). Small cells of a week
-- are pooled into its remainder ('rest'). See docs/privacy.md and CONTRACT.md section 5.

-- CLEAN pulses per (organization, ISO week, group), kept exact by triggers in the same
-- transaction as every insert and every change of moderation status. `suppressed` compares it
-- with what was released, so no request scans pulses.
CREATE TABLE pulse_clean_week_stats (
  org_id       text NOT NULL REFERENCES organizations (id),
  week         date NOT NULL,
  grp          text NOT NULL,
  clean_count  integer NOT NULL,
  PRIMARY KEY (org_id, week, grp)
);

INSERT INTO pulse_clean_week_stats (org_id, week, grp, clean_count)
SELECT org_id, date_trunc('week', created_at AT TIME ZONE 'UTC')::date,
       coalesce('team:' || subteam_id, 'none'), count(*)
  FROM pulses WHERE moderation_status = 'CLEAN' GROUP BY 1, 2, 3;

-- Weeks whose release is frozen, as spans of Mondays [first_week, last_week]. A span is written
-- by the transaction that releases those weeks, and never changes or goes away.
CREATE TABLE comment_release_spans (
  org_id       text NOT NULL REFERENCES organizations (id),
  first_week   date NOT NULL,
  last_week    date NOT NULL,
  released_at  timestamptz NOT NULL,
  PRIMARY KEY (org_id, first_week, last_week),
  CHECK (first_week <= last_week)
);

-- One row per cell of a released week: its group's cells, and the week's remainder ('rest').
-- sample: CLEAN pulses when the week was frozen; left_clean: how many of them stopped being CLEAN
-- since. A pooled group cell (sample 1-4) has released = false; its pulses count in 'rest'.
CREATE TABLE comment_cells (
  org_id      text NOT NULL REFERENCES organizations (id),
  week        date NOT NULL,
  cell        text NOT NULL,
  sample      integer NOT NULL,
  released    boolean NOT NULL,
  left_clean  integer NOT NULL DEFAULT 0,
  withdrawn   boolean NOT NULL DEFAULT false,
  PRIMARY KEY (org_id, week, cell)
);

-- The frozen membership of released weeks: every pulse that was CLEAN when its week was frozen,
-- the cell it is released in (its group, or 'rest' when pooled), its place in the week (a keyed
-- hash of its id) and its comment. `visible` is true while that cell is released and not withdrawn.
CREATE TABLE comment_release_members (
  org_id    text NOT NULL REFERENCES organizations (id),
  pulse_id  text NOT NULL,
  week      date NOT NULL,
  grp       text NOT NULL,
  cell      text NOT NULL,
  rank      bytea NOT NULL,
  comment   text,
  visible   boolean NOT NULL,
  PRIMARY KEY (org_id, pulse_id)
);
-- The two reads of GET /comments: every released comment of a range of weeks, or one team's.
CREATE INDEX comment_release_by_week ON comment_release_members (org_id, week DESC, rank)
  INCLUDE (comment) WHERE visible AND comment IS NOT NULL;
CREATE INDEX comment_release_by_cell ON comment_release_members (org_id, cell, week DESC, rank)
  INCLUDE (comment) WHERE visible AND comment IS NOT NULL;

-- The old index served the day-range comments query, which no longer exists.
DROP INDEX pulses_clean_comments;

CREATE FUNCTION pulses_fold_into_clean_weeks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO pulse_clean_week_stats AS s (org_id, week, grp, clean_count)
  SELECT org_id, date_trunc('week', created_at AT TIME ZONE 'UTC')::date, coalesce('team:' || subteam_id, 'none'), count(*)
    FROM new_pulses WHERE moderation_status = 'CLEAN' GROUP BY 1, 2, 3
  ON CONFLICT (org_id, week, grp) DO UPDATE SET clean_count = s.clean_count + EXCLUDED.clean_count;
  RETURN NULL;
END
$$;

CREATE TRIGGER pulses_fold_into_clean_weeks
  AFTER INSERT ON pulses
  REFERENCING NEW TABLE AS new_pulses
  FOR EACH STATEMENT EXECUTE FUNCTION pulses_fold_into_clean_weeks();

-- A change of moderation status: the CLEAN count follows, and a frozen cell one of whose pulses
-- stops being CLEAN is withdrawn whole when that pulse's comment was released, or when fewer
-- than 5 of its pulses are still CLEAN.
CREATE FUNCTION pulses_moderation_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  wk date := date_trunc('week', NEW.created_at AT TIME ZONE 'UTC')::date;
  g text := coalesce('team:' || NEW.subteam_id, 'none');
  m record;
  gone boolean;
BEGIN
  -- Serializes with a release of this organization's weeks (which holds the row FOR NO KEY
  -- UPDATE): a release either sees this change, or is seen by it below.
  PERFORM 1 FROM organizations WHERE id = NEW.org_id FOR SHARE;

  IF OLD.moderation_status = 'CLEAN' AND NEW.moderation_status <> 'CLEAN' THEN
    UPDATE pulse_clean_week_stats SET clean_count = clean_count - 1 WHERE org_id = NEW.org_id AND week = wk AND grp = g;
    SELECT cell, comment INTO m FROM comment_release_members WHERE org_id = NEW.org_id AND pulse_id = NEW.id;
    IF FOUND THEN
      UPDATE comment_cells
         SET left_clean = left_clean + 1,
             withdrawn = withdrawn OR (released AND (m.comment IS NOT NULL OR sample - left_clean - 1 < 5))
       WHERE org_id = NEW.org_id AND week = wk AND cell = m.cell
      RETURNING withdrawn INTO gone;
      IF gone THEN
        UPDATE comment_release_members SET visible = false
         WHERE org_id = NEW.org_id AND week = wk AND cell = m.cell AND visible;
      END IF;
    END IF;
  ELSIF OLD.moderation_status <> 'CLEAN' AND NEW.moderation_status = 'CLEAN' THEN
    INSERT INTO pulse_clean_week_stats AS s (org_id, week, grp, clean_count) VALUES (NEW.org_id, wk, g, 1)
    ON CONFLICT (org_id, week, grp) DO UPDATE SET clean_count = s.clean_count + 1;
    -- A member coming back is counted again, but its withdrawn cell stays withdrawn.
    UPDATE comment_cells c SET left_clean = c.left_clean - 1
      FROM comment_release_members r
     WHERE r.org_id = NEW.org_id AND r.pulse_id = NEW.id
       AND c.org_id = r.org_id AND c.week = r.week AND c.cell = r.cell;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER pulses_moderation_changed
  AFTER UPDATE OF moderation_status ON pulses
  FOR EACH ROW WHEN (OLD.moderation_status IS DISTINCT FROM NEW.moderation_status)
  EXECUTE FUNCTION pulses_moderation_changed();
