-- The events still to be fanned out to webhook endpoints, as a queue of their ids.
--
-- Before, an event was marked with `fanned_out_at` once its deliveries were made: an UPDATE that
-- wrote a second version of the event (its whole payload) and new entries in all five of its
-- indexes, for every event, whether or not the account had an endpoint. Now the statement that
-- writes an event also writes its id here, and the fan-out deletes the ids it took in the
-- transaction that makes their deliveries (docs/webhooks.md, "Running delivery").
--
-- No foreign key to events: both rows are written by one statement (a data-modifying CTE), events
-- are never deleted, and the fan-out joins each id to its event, so the check would only add a
-- lookup and a row lock on the event to every insert.
CREATE TABLE event_fan_out (
  event_id text PRIMARY KEY
);

INSERT INTO event_fan_out (event_id) SELECT id FROM events WHERE fanned_out_at IS NULL;

DROP INDEX events_fan_out_idx;
ALTER TABLE events DROP COLUMN fanned_out_at;
