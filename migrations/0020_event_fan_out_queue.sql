-- The events still to be fanned out to webhook endpoints, as a queue of their ids.
--
-- Before, an event was marked with `fanned_out_at` once its deliveries were made: an UPDATE that
-- wrote a second version of the event (its whole payload) and new entries in all five of its
-- indexes, for every event, whether or not the account had an endpoint. Now every insert into
-- events also queues the new ids here (a statement-level trigger: one INSERT per statement,
-- whatever code wrote the events), and the fan-out deletes the ids it took in the transaction that
-- makes their deliveries (docs/webhooks.md, "Running delivery").
--
-- Rolling upgrade: hosts still on the previous code keep inserting events, and the trigger queues
-- them too; their fan-out job fails until they restart (it reads the dropped column), which
-- delays nothing, since the upgraded hosts fan out every queued event. The lock keeps events from
-- being written between the trigger's creation and the copy of the unmarked ones.
--
-- No foreign key to events: the trigger writes each id in the statement that inserts its event,
-- events are never deleted, and the fan-out joins each id to its event.
LOCK TABLE events IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE event_fan_out (
  event_id text PRIMARY KEY
);

CREATE FUNCTION queue_events_for_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_fan_out (event_id) SELECT id FROM written;
  RETURN NULL;
END
$$;

CREATE TRIGGER events_queue_for_fan_out
  AFTER INSERT ON events
  REFERENCING NEW TABLE AS written
  FOR EACH STATEMENT EXECUTE FUNCTION queue_events_for_fan_out();

INSERT INTO event_fan_out (event_id) SELECT id FROM events WHERE fanned_out_at IS NULL;

DROP INDEX events_fan_out_idx;
ALTER TABLE events DROP COLUMN fanned_out_at;
