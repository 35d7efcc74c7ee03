-- omweso-cam match records, schema version 1 (see omweso_cam/store.py for migrations).
-- Positions are stored in full notation (RULES.md section 2), options and results as JSON.

CREATE TABLE IF NOT EXISTS migrations (
    version     INTEGER PRIMARY KEY,
    description TEXT    NOT NULL,
    applied_at  TEXT    NOT NULL
);

CREATE TABLE IF NOT EXISTS matches (
    id          INTEGER PRIMARY KEY,
    south       TEXT    NOT NULL,
    north       TEXT    NOT NULL,
    rules       TEXT    NOT NULL,
    options     TEXT    NOT NULL DEFAULT '{}',
    mode        TEXT    NOT NULL DEFAULT 'classical',
    first       TEXT    NOT NULL DEFAULT 'S' CHECK (first IN ('S', 'N')),
    points_s    INTEGER NOT NULL DEFAULT 0,
    points_n    INTEGER NOT NULL DEFAULT 0,
    target      INTEGER,
    status      TEXT    NOT NULL DEFAULT 'playing' CHECK (status IN ('playing', 'finished')),
    winner      TEXT    CHECK (winner IN ('S', 'N')),
    created_at  TEXT    NOT NULL,
    finished_at TEXT
);

CREATE TABLE IF NOT EXISTS games (
    id          INTEGER PRIMARY KEY,
    match_id    INTEGER REFERENCES matches(id),
    number      INTEGER NOT NULL,
    rules       TEXT    NOT NULL,
    options     TEXT    NOT NULL DEFAULT '{}',
    initial     TEXT,
    tags        TEXT    NOT NULL DEFAULT '{}',
    status      TEXT    NOT NULL DEFAULT 'setup'
                CHECK (status IN ('setup', 'playing', 'finished', 'annulled')),
    result      TEXT,
    created_at  TEXT    NOT NULL,
    finished_at TEXT,
    UNIQUE (match_id, number)
);

CREATE TABLE IF NOT EXISTS plies (
    id          INTEGER PRIMARY KEY,
    game_id     INTEGER NOT NULL REFERENCES games(id),
    n           INTEGER NOT NULL,
    move        TEXT    NOT NULL,
    side        TEXT    NOT NULL CHECK (side IN ('S', 'N')),
    after       TEXT    NOT NULL,
    frame       INTEGER,
    time_s      REAL,
    recorded_at TEXT    NOT NULL,
    UNIQUE (game_id, n)
);

CREATE TABLE IF NOT EXISTS events (
    id          INTEGER PRIMARY KEY,
    match_id    INTEGER REFERENCES matches(id),
    game_id     INTEGER REFERENCES games(id),
    kind        TEXT    NOT NULL,
    frame       INTEGER,
    time_s      REAL,
    data        TEXT    NOT NULL DEFAULT '{}',
    recorded_at TEXT    NOT NULL
);

CREATE INDEX IF NOT EXISTS plies_by_game ON plies (game_id, n);
CREATE INDEX IF NOT EXISTS games_by_match ON games (match_id, number);
CREATE INDEX IF NOT EXISTS events_by_game ON events (game_id, id);
