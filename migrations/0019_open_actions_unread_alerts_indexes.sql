-- Issue 28: the console's overview lists an organization's newest open actions and unread alerts.
-- Through the indexes of all actions (or alerts) newest first, that read walks past every done or
-- cancelled action (every read alert) newer than the open ones, and with stale statistics the
-- planner sorted all of them (22 ms for 66,000 actions, each overview). These partial indexes hold
-- only the rows the overview asks for, in its order.
CREATE INDEX actions_open_recent ON actions (org_id, created_at DESC, id DESC) WHERE status = 'active';
CREATE INDEX alerts_unread_recent ON alerts (org_id, created_at DESC, id DESC) WHERE read_at IS NULL;
