-- 1: runs and their trials, one row each, with every trial's verdict.
-- A run is keyed by its run id and a trial by (run id, trial id), so writing a run again
-- (a retried activity) updates its rows instead of adding new ones.

CREATE TABLE runs (
    run_id        text PRIMARY KEY,
    spec_name     text NOT NULL,
    spec_path     text NOT NULL DEFAULT '',
    plan          text NOT NULL DEFAULT '',
    conditions    text[] NOT NULL DEFAULT '{}',
    cells         text[] NOT NULL DEFAULT '{}',
    trials        integer NOT NULL,
    finished      integer NOT NULL,
    started       timestamptz NOT NULL,
    ended         timestamptz,
    aborted       text NOT NULL DEFAULT '',
    agent_command text NOT NULL DEFAULT '',
    out_dir       text NOT NULL DEFAULT '',
    host          text NOT NULL DEFAULT '',
    by_verdict    jsonb NOT NULL DEFAULT '{}',
    by_outcome    jsonb NOT NULL DEFAULT '{}',
    written_at    timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX runs_spec_started ON runs (spec_name, started DESC);

CREATE TABLE trials (
    run_id           text NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    trial_id         text NOT NULL,
    cell             text NOT NULL,
    condition        text NOT NULL,
    rep              integer NOT NULL,
    seed             bigint NOT NULL,
    outcome          text NOT NULL,
    reason           text NOT NULL DEFAULT '',
    verdict          text NOT NULL DEFAULT '',
    verdict_why      text NOT NULL DEFAULT '',
    world_ok         boolean NOT NULL,
    claim            text NOT NULL DEFAULT '',
    claim_by         text NOT NULL DEFAULT '',
    closing          text NOT NULL DEFAULT '',
    success_possible boolean NOT NULL,
    calls            integer NOT NULL DEFAULT 0,
    fired            integer NOT NULL DEFAULT 0,
    duration_ms      bigint NOT NULL DEFAULT 0,
    dir              text NOT NULL DEFAULT '',
    result           jsonb NOT NULL,
    PRIMARY KEY (run_id, trial_id)
);

CREATE INDEX trials_verdict ON trials (run_id, cell, condition, verdict);
