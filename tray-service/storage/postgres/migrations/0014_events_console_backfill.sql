-- Events stored before the events console (0004): that migration added the console's columns
-- with their defaults and rollups from then on, so an older event that is still kept read as
-- undecided (`moderation = 'none'`, though its decisions are listed), had no acting user or
-- community for ?userId= and ?communityId=, and was not in the events-per-minute chart. This
-- gives those events what the store path and the decisions' saving give every event now.
-- Set-based: each statement reads its tables once, whatever their size; like every migration it
-- runs in one transaction (migrate.ts), holding its locks on stored_events until it commits, so
-- make an upgrade from before 0004 in a quiet hour (docs/storage.md). Expired events are left as they are: no reader sees them.

-- The moderation outcome: the most severe action of the decisions about that delivery (a ban
-- request outweighs a flag, domain/event-moderation.ts). Only decisions about this delivery count:
-- a key stored again after its first delivery expired keeps the earlier one's decisions until
-- the purge, with that delivery's receipt. Reads moderation_decisions, a small table, and
-- updates the decided events by key.
UPDATE stored_events e
SET moderation = d.action
FROM (
  SELECT event_key, event_received_at,
    CASE WHEN bool_or(action = 'ban-request') THEN 'ban-request' ELSE 'flag' END AS action
  FROM moderation_decisions
  WHERE action IN ('flag', 'ban-request')
  GROUP BY event_key, event_received_at) AS d
WHERE e.key = d.event_key AND e.received_at = d.event_received_at
  AND e.moderation = 'none' AND e.expires_at > now();

-- The acting user and community, read from the payload as the mapping reads them
-- (domain/map-event.ts, the EventSubject of each event name, as of this version): the author on a
-- post, comment or reaction and, when the post is on a community's feed, that community; the one
-- user named by a membership change, profile change, deletion or ban (none when it names
-- several), and the community of a membership change. Only events the mapping applied (the
-- others have no subject) and that have neither yet (every later event has what its mapping
-- gave). An id longer than an event may carry (128 UTF-16 code units, domain/event-id.ts) is
-- left out, as the store path leaves it: it would not fit the columns' indexes.
WITH derived AS (
  SELECT e.key,
    CASE
      WHEN e.event IN ('post.didCreate', 'post.didDelete') THEN e.data->'post'->>'postedUserId'
      WHEN e.event IN ('comment.didCreate', 'comment.didDelete') THEN e.data->'comment'->>'userId'
      WHEN e.event IN ('reaction.didAdd', 'reaction.didRemove') THEN e.data->'reaction'->>'userId'
      ELSE listed.only_user
    END AS user_id,
    CASE
      WHEN e.event IN ('community.didJoin', 'community.didLeave') THEN e.data->'community'->>'communityId'
      WHEN e.event IN ('post.didCreate', 'post.didDelete', 'comment.didCreate', 'comment.didDelete',
          'reaction.didAdd', 'reaction.didRemove')
        AND e.data->'post'->>'targetType' = 'community' AND jsonb_typeof(e.data->'community') = 'object'
        THEN e.data->'community'->>'communityId'
    END AS community_id
  FROM stored_events e
  LEFT JOIN LATERAL (
    SELECT min(id) AS only_user
    FROM (
      SELECT jsonb_array_elements_text(e.data->'userIds') AS id
      WHERE e.event IN ('community.didJoin', 'community.didLeave', 'user.didDelete', 'user.didGlobalBan',
          'user.didGlobalUnban')
        AND jsonb_typeof(e.data->'userIds') = 'array'
      UNION ALL
      SELECT u->>'userId' FROM jsonb_array_elements(e.data->'users') AS u
      WHERE e.event IN ('user.didUpdate', 'user.didDelete') AND jsonb_typeof(e.data->'users') = 'array'
    ) AS ids
    HAVING count(DISTINCT id) = 1) AS listed ON true
  WHERE e.status = 'applied' AND e.user_id IS NULL AND e.community_id IS NULL AND e.expires_at > now()),
-- UTF-16 code units: a character above U+FFFF is two of them, one character to PostgreSQL.
within_limit AS (
  SELECT key,
    CASE WHEN char_length(user_id) + char_length(regexp_replace(user_id, '[^\U00010000-\U0010FFFF]', '', 'g')) <= 128
      THEN user_id END AS user_id,
    CASE WHEN char_length(community_id)
        + char_length(regexp_replace(community_id, '[^\U00010000-\U0010FFFF]', '', 'g')) <= 128
      THEN community_id END AS community_id
  FROM derived)
UPDATE stored_events e
SET user_id = w.user_id, community_id = w.community_id
FROM within_limit w
WHERE e.key = w.key AND (w.user_id IS NOT NULL OR w.community_id IS NOT NULL);

-- The events-per-minute chart: the minutes that have no count yet, counted from the events kept,
-- as the store path counts them (every stored event, by name; the minute kept as long as its
-- latest expiry, postgres-events.ts). A minute holding events from both before and after 0004
-- has a count already and keeps it: the events before are missing from that one minute. The lag
-- chart cannot be rebuilt: an event stored before 0004 has no time it was applied.
INSERT INTO stored_event_minutes (minute, counts, expires_at)
SELECT minute, jsonb_object_agg(event, n), max(expires_at)
FROM (
  SELECT to_timestamp(floor(extract(epoch FROM received_at) / 60) * 60) AS minute, event,
    count(*)::int AS n, max(expires_at) AS expires_at
  FROM stored_events
  WHERE expires_at > now()
  GROUP BY 1, 2) AS per_name
WHERE NOT EXISTS (SELECT 1 FROM stored_event_minutes m WHERE m.minute = per_name.minute)
GROUP BY minute
ORDER BY minute;
