-- Device cookies (issue 52, M2): a browser where an account signed in carries a token the service
-- signed; its failed checks are counted against the token itself, as a third scope beside the
-- account and the address, in the same sliding window.
ALTER TABLE console_sign_in_attempts DROP CONSTRAINT console_sign_in_attempts_scope_check;
ALTER TABLE console_sign_in_attempts ADD CONSTRAINT console_sign_in_attempts_scope_check CHECK (scope IN ('account', 'address', 'device'));
