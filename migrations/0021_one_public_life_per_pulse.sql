-- Issue 40 (CONTRACT.md section 5: one public life per pulse, nothing live behind `suppressed`).
-- Every count behind freezing, late pools and `suppressed` is now of statuses as answers show them,
-- never of a moderation no answer shows yet:
-- * pulse_clean_week_stats.clean_count: the group's pulses shown CLEAN (coalesce(shown_status,
--   moderation_status)); it was the pulses CLEAN now. A moderation no longer moves it; a release
--   takes out the pulses it freezes FLAGGED.
-- * comment_frozen_groups.frozen_clean: the group's pulses that releases froze CLEAN (a covered
--   pulse is shown with its frozen status); it was those of them CLEAN now.
-- Only pulses shown with another status than their current one (shown_status set: the few that a
-- moderation changed, found by the partial index pulses_shown_status) count differently, each by
-- one: +1 when shown CLEAN (now FLAGGED), -1 when shown FLAGGED (now CLEAN). A late pool (the
-- difference of the two) is unchanged for a covered pulse, which moves both.
UPDATE pulse_clean_week_stats s SET clean_count = s.clean_count + d.delta
  FROM (SELECT p.org_id, date_trunc('week', p.created_at AT TIME ZONE 'UTC')::date AS week,
               coalesce('team:' || p.subteam_id, 'none') AS grp,
               sum(CASE WHEN p.shown_status = 'CLEAN' THEN 1 ELSE -1 END)::int AS delta
          FROM pulses p WHERE p.shown_status IS NOT NULL
         GROUP BY 1, 2, 3) d
 WHERE s.org_id = d.org_id AND s.week = d.week AND s.grp = d.grp;

UPDATE comment_frozen_groups f SET frozen_clean = f.frozen_clean + d.delta
  FROM (SELECT m.org_id, m.week, m.grp,
               sum(CASE WHEN p.shown_status = 'CLEAN' THEN 1 ELSE -1 END)::int AS delta
          FROM pulses p JOIN comment_release_members m ON m.org_id = p.org_id AND m.pulse_id = p.id
         WHERE p.shown_status IS NOT NULL
         GROUP BY 1, 2, 3) d
 WHERE f.org_id = d.org_id AND f.week = d.week AND f.grp = d.grp;
