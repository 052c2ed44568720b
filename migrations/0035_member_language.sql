-- A console member's own language (issue 57): a locale of the catalogues (src/i18n LOCALES), or
-- NULL to follow the browser's Accept-Language, as every member does until they choose. Only the
-- member's own pages read it; the operator API does not show it.
ALTER TABLE members ADD COLUMN language text CHECK (language IS NULL OR language ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}$');
