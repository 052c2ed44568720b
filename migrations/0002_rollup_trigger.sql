-- Rollups at hour and minute grain, and one statement-level trigger that keeps every rollup
-- exact for any insert into pulses (the loader, the importer's COPY, an operator's SQL):
-- a rolling window then reads whole days, hours and minutes from rollups and scans at most
-- two partial minutes of pulses, whatever the organization's size.

CREATE TABLE pulse_hour_stats (
  org_id       text NOT NULL REFERENCES organizations (id),
  hour         timestamptz NOT NULL,
  pulse_count  integer NOT NULL,
  level_sum    bigint NOT NULL,
  PRIMARY KEY (org_id, hour)
);

CREATE TABLE pulse_minute_stats (
  org_id       text NOT NULL REFERENCES organizations (id),
  minute       timestamptz NOT NULL,
  pulse_count  integer NOT NULL,
  level_sum    bigint NOT NULL,
  PRIMARY KEY (org_id, minute)
);

INSERT INTO pulse_hour_stats (org_id, hour, pulse_count, level_sum)
SELECT org_id, date_trunc('hour', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', count(*), sum(level)
  FROM pulses GROUP BY 1, 2;

INSERT INTO pulse_minute_stats (org_id, minute, pulse_count, level_sum)
SELECT org_id, date_trunc('minute', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', count(*), sum(level)
  FROM pulses GROUP BY 1, 2;

CREATE FUNCTION pulses_fold_into_rollups() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO pulse_totals AS t (org_id, pulse_count, level_sum)
  SELECT org_id, count(*), sum(level) FROM new_pulses GROUP BY org_id
  ON CONFLICT (org_id) DO UPDATE
    SET pulse_count = t.pulse_count + EXCLUDED.pulse_count, level_sum = t.level_sum + EXCLUDED.level_sum;

  INSERT INTO pulse_day_stats AS d (org_id, day, pulse_count, level_sum)
  SELECT org_id, (created_at AT TIME ZONE 'UTC')::date, count(*), sum(level) FROM new_pulses GROUP BY 1, 2
  ON CONFLICT (org_id, day) DO UPDATE
    SET pulse_count = d.pulse_count + EXCLUDED.pulse_count, level_sum = d.level_sum + EXCLUDED.level_sum;

  INSERT INTO pulse_team_day_stats AS d (org_id, subteam_id, day, pulse_count, level_sum)
  SELECT org_id, subteam_id, (created_at AT TIME ZONE 'UTC')::date, count(*), sum(level)
    FROM new_pulses WHERE subteam_id IS NOT NULL GROUP BY 1, 2, 3
  ON CONFLICT (org_id, subteam_id, day) DO UPDATE
    SET pulse_count = d.pulse_count + EXCLUDED.pulse_count, level_sum = d.level_sum + EXCLUDED.level_sum;

  INSERT INTO pulse_hour_stats AS h (org_id, hour, pulse_count, level_sum)
  SELECT org_id, date_trunc('hour', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', count(*), sum(level)
    FROM new_pulses GROUP BY 1, 2
  ON CONFLICT (org_id, hour) DO UPDATE
    SET pulse_count = h.pulse_count + EXCLUDED.pulse_count, level_sum = h.level_sum + EXCLUDED.level_sum;

  INSERT INTO pulse_minute_stats AS m (org_id, minute, pulse_count, level_sum)
  SELECT org_id, date_trunc('minute', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', count(*), sum(level)
    FROM new_pulses GROUP BY 1, 2
  ON CONFLICT (org_id, minute) DO UPDATE
    SET pulse_count = m.pulse_count + EXCLUDED.pulse_count, level_sum = m.level_sum + EXCLUDED.level_sum;

  RETURN NULL;
END
$$;

CREATE TRIGGER pulses_fold_into_rollups
  AFTER INSERT ON pulses
  REFERENCING NEW TABLE AS new_pulses
  FOR EACH STATEMENT EXECUTE FUNCTION pulses_fold_into_rollups();

-- Pulses are append-only: nothing in the service updates their level, time or team, or
-- deletes them. Refuse it, so the rollups can never drift from the rows.
CREATE FUNCTION pulses_refuse_rollup_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'pulses are append-only: level, created_at, subteam_id and org_id cannot change, and rows cannot be deleted'
    USING ERRCODE = 'restrict_violation';
END
$$;

CREATE TRIGGER pulses_refuse_rollup_changes
  BEFORE UPDATE OF org_id, level, created_at, subteam_id OR DELETE ON pulses
  FOR EACH ROW EXECUTE FUNCTION pulses_refuse_rollup_changes();
