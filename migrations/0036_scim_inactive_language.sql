-- A user SCIM turned off keeps their roster language (issues 56 and 57): the identity provider
-- reads it back as it set it, and the person has it again when turned on. As respondents.language.
ALTER TABLE scim_inactive_users ADD COLUMN language text CHECK (language IS NULL OR language ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}$');
