-- The record (SURFACE §1.4, §4.2, §6, §7): what each account tracks, the recorder's schedule,
-- and the normalized players, clans and battles it reads. Instants are BIGINT Unix
-- milliseconds; tags are normalized (§6.1). A battle is one row however many logs it was
-- seen in; each recorded player's side of it is one `battle_players` row (its observation).

-- An agent's door answers for one clan (§1.1); NULL until the owner sets it.
ALTER TABLE agents ADD COLUMN clan_tag TEXT;

-- Players an account tracks. `principal` is 'person' or the agent's id: agents track only
-- as watching, spend the owner's slots, and never see the owner's list.
CREATE TABLE tracked_players (
    account_id TEXT NOT NULL REFERENCES accounts (id),
    principal TEXT NOT NULL,
    player_tag TEXT NOT NULL,
    relationship TEXT NOT NULL CHECK (relationship IN ('primary', 'alt', 'friend', 'watching')),
    notify BOOLEAN NOT NULL DEFAULT TRUE,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, principal, player_tag)
);
CREATE INDEX tracked_players_tag ON tracked_players (player_tag);

CREATE TABLE tracked_clans (
    account_id TEXT NOT NULL REFERENCES accounts (id),
    principal TEXT NOT NULL,
    clan_tag TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('activity', 'comprehensive')),
    notify BOOLEAN NOT NULL DEFAULT TRUE,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, principal, clan_tag)
);
CREATE INDEX tracked_clans_tag ON tracked_clans (clan_tag);

-- Private names for players (elixir_nickname), per account and principal.
CREATE TABLE nicknames (
    account_id TEXT NOT NULL REFERENCES accounts (id),
    principal TEXT NOT NULL,
    player_tag TEXT NOT NULL,
    nickname TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, principal, player_tag)
);

-- on_behalf_of bindings of an agent or integration door (elixir_identify); write-once.
CREATE TABLE identities (
    agent_id TEXT NOT NULL REFERENCES agents (id),
    external_id TEXT NOT NULL,
    player_tag TEXT NOT NULL,
    display_name TEXT,
    bound_at BIGINT NOT NULL,
    PRIMARY KEY (agent_id, external_id)
);

-- The recorder's schedule: one row per (endpoint, subject) it reads. A recorder claims a due
-- row by setting its lease in one conditional UPDATE, so two recorders never read one
-- subject at once.
CREATE TABLE polls (
    endpoint TEXT NOT NULL CHECK (endpoint IN ('battlelog', 'player', 'clan')),
    subject TEXT NOT NULL,
    next_at BIGINT NOT NULL,
    reason TEXT NOT NULL,
    lease_owner TEXT,
    lease_until BIGINT,
    last_read_at BIGINT,
    last_status BIGINT,
    failures BIGINT NOT NULL DEFAULT 0,
    empty_reads BIGINT NOT NULL DEFAULT 0,
    -- A 404 holds the subject until then (§7.2).
    held_until BIGINT,
    not_found BOOLEAN NOT NULL DEFAULT FALSE,
    -- Named in a call: read at least hourly until then.
    demand_until BIGINT,
    -- The fastest recent log fill (ms for ~30 battles), for the overflow guard.
    fastest_fill_ms BIGINT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (endpoint, subject)
);
CREATE INDEX polls_due ON polls (next_at);

CREATE TABLE players (
    tag TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    -- Lower-cased NFKC name, for players_search.
    name_key TEXT NOT NULL,
    clan_tag TEXT,
    clan_name TEXT,
    role TEXT,
    trophies BIGINT,
    -- The normalized /players/{tag} profile (JSON); NULL until it is read.
    profile TEXT,
    observed_at BIGINT,
    first_seen_at BIGINT NOT NULL,
    last_battle_at BIGINT
);
CREATE INDEX players_name ON players (name_key);

-- One row per profile read: the daily series of players_timeline.
CREATE TABLE player_snapshots (
    player_tag TEXT NOT NULL,
    observed_at BIGINT NOT NULL,
    trophies BIGINT,
    best_trophies BIGINT,
    pol_league BIGINT,
    pol_trophies BIGINT,
    king_tower_level BIGINT,
    collection_level BIGINT,
    donations BIGINT,
    battle_count BIGINT,
    wins BIGINT,
    losses BIGINT,
    PRIMARY KEY (player_tag, observed_at)
);

CREATE TABLE clans (
    tag TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    -- The normalized /clans/{tag} profile (JSON); NULL until it is read.
    profile TEXT,
    observed_at BIGINT,
    first_seen_at BIGINT NOT NULL
);

-- Membership as observed: a row per (clan, player) stint; `left_observed_at` NULL while in.
CREATE TABLE clan_members (
    clan_tag TEXT NOT NULL,
    player_tag TEXT NOT NULL,
    name TEXT NOT NULL,
    role TEXT,
    joined_observed_at BIGINT NOT NULL,
    left_observed_at BIGINT,
    last_seen_at BIGINT,
    PRIMARY KEY (clan_tag, player_tag)
);
CREATE INDEX clan_members_player ON clan_members (player_tag);

CREATE TABLE battles (
    battle_id TEXT PRIMARY KEY,
    battle_time BIGINT NOT NULL,
    battle_type TEXT NOT NULL,
    mode TEXT NOT NULL,
    game_mode_id BIGINT,
    -- The normalized battle (JSON), as its first observer saw it; re-sightings fill gaps.
    body TEXT NOT NULL,
    first_observed_at BIGINT NOT NULL
);
CREATE INDEX battles_time ON battles (battle_time);

-- A recorded player's side of a battle: the observation from that player's log.
CREATE TABLE battle_players (
    player_tag TEXT NOT NULL,
    battle_id TEXT NOT NULL REFERENCES battles (battle_id),
    battle_time BIGINT NOT NULL,
    mode TEXT NOT NULL,
    game_mode_id BIGINT,
    -- 'team' or 'opponent' in the stored body.
    side TEXT NOT NULL,
    outcome TEXT,
    crowns BIGINT,
    trophy_change BIGINT,
    deck_hash TEXT,
    opponent_tag TEXT,
    clan_tag TEXT,
    observed_at BIGINT NOT NULL,
    PRIMARY KEY (player_tag, battle_id)
);
CREATE INDEX battle_players_time ON battle_players (player_tag, battle_time);
CREATE INDEX battle_players_clan ON battle_players (clan_tag, battle_time);
CREATE INDEX battle_players_battle ON battle_players (battle_id);

-- Each battle-log read: what the coverage tool measures.
CREATE TABLE battlelog_reads (
    player_tag TEXT NOT NULL,
    read_at BIGINT NOT NULL,
    entries BIGINT NOT NULL,
    new_entries BIGINT NOT NULL,
    oldest_at BIGINT,
    newest_at BIGINT,
    PRIMARY KEY (player_tag, read_at)
);

-- Spans the record may miss (§7.4), never filled with zeros.
CREATE TABLE coverage_gaps (
    subject TEXT NOT NULL,
    from_at BIGINT NOT NULL,
    to_at BIGINT NOT NULL,
    reason TEXT NOT NULL,
    detected_at BIGINT NOT NULL,
    PRIMARY KEY (subject, from_at, to_at)
);

-- The upstream budget's state (§7.3), one row every instance updates under a row lock, so the
-- shared 1 request/s, the pauses and the circuit hold across instances.
CREATE TABLE upstream_budget (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    state TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
