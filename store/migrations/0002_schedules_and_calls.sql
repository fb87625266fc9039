-- 2: scheduled runs compared with the previous run of their schedule, and (optionally)
-- every recorded call of every trial.

ALTER TABLE runs ADD COLUMN schedule        text    NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN previous_run_id text    NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN regressed       boolean NOT NULL DEFAULT false;

CREATE INDEX runs_schedule_started ON runs (schedule, started DESC) WHERE schedule <> '';

CREATE TABLE comparisons (
    run_id          text NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    cell            text NOT NULL,
    condition       text NOT NULL,
    previous_run_id text NOT NULL,
    method          text NOT NULL,
    a_k             integer NOT NULL,
    a_n             integer NOT NULL,
    b_k             integer NOT NULL,
    b_n             integer NOT NULL,
    better          integer NOT NULL DEFAULT 0,
    worse           integer NOT NULL DEFAULT 0,
    same            integer NOT NULL DEFAULT 0,
    p               double precision NOT NULL,
    call            text NOT NULL,
    PRIMARY KEY (run_id, cell, condition)
);

CREATE TABLE calls (
    run_id    text NOT NULL,
    trial_id  text NOT NULL,
    seq       integer NOT NULL,
    type      text NOT NULL,
    at        timestamptz,
    transport text NOT NULL DEFAULT '',
    tool      text NOT NULL DEFAULT '',
    fired     boolean NOT NULL DEFAULT false,
    is_error  boolean NOT NULL DEFAULT false,
    row       jsonb NOT NULL,
    PRIMARY KEY (run_id, trial_id, seq),
    FOREIGN KEY (run_id, trial_id) REFERENCES trials (run_id, trial_id) ON DELETE CASCADE
);
