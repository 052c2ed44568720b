-- Issue 53: rounds you can see (CONTRACT.md section 11, amended). Each round says how it went: how
-- many mails the relay took (first links and re-sent ones), how many reminders, whether it went by
-- mail at all, and the relay's last refusal with its time. All of it is per round, never per
-- person, and written only while mailing (the round job, "send now"), never by an opening, an
-- issuance or an answer. The relay's reason is stored with any address in it replaced
-- (src/domain/checkins/round-status.ts). Rounds started before this migration have NULL counts:
-- they were not counted.
ALTER TABLE checkin_rounds ADD COLUMN by_mail boolean;
ALTER TABLE checkin_rounds ADD COLUMN mailed integer CHECK (mailed >= 0);
ALTER TABLE checkin_rounds ADD COLUMN reminded integer CHECK (reminded >= 0);
ALTER TABLE checkin_rounds ADD COLUMN last_error text CHECK (length(last_error) <= 500);
ALTER TABLE checkin_rounds ADD COLUMN last_error_at timestamptz;
ALTER TABLE checkin_rounds ALTER COLUMN mailed SET DEFAULT 0;
ALTER TABLE checkin_rounds ALTER COLUMN reminded SET DEFAULT 0;

-- A waiting mail the relay refused at its last try (it stays waiting, and is tried again at the
-- next run). The row names its person, as it did before; it is erased once the relay takes the
-- mail, and the round's status counts these rows, never shows whose they are.
ALTER TABLE checkin_outbox ADD COLUMN refused boolean NOT NULL DEFAULT false;
