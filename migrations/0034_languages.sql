-- Every employee in their own language (issue 57, CONTRACT section 12 amended: *In the
-- respondent's language*). A respondent's language is a roster column (the people file, SCIM's
-- preferredLanguage); without one, the organization's default. Only the round's mails read them:
-- the mail is written in that language and its link carries it in the fragment, which no request
-- sends. Nothing on the answer's path stores a language (docs/privacy.md).
ALTER TABLE respondents ADD COLUMN language text CHECK (language IS NULL OR language ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}$');
ALTER TABLE checkin_settings ADD COLUMN language text NOT NULL DEFAULT 'en' CHECK (language ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}$');
