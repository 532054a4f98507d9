//! The store's SQL schema and its migrations (docs/store.md, "Schema"): each migration is applied
//! once, in order, in the transaction that records its version.

/// The schema version this build writes; a store of a higher version is refused (a newer
/// bench-normalize made it).
pub const SCHEMA_VERSION: i64 = 1;

/// Migration `i` takes a store from version `i` to `i + 1`.
pub(super) const MIGRATIONS: &[&str] = &[
    // 0 -> 1: the runs, their labels, and the version table.
    "
CREATE TABLE schema_version (
    version     INTEGER NOT NULL,
    applied_at  TEXT NOT NULL
);
CREATE TABLE runs (
    id                          INTEGER PRIMARY KEY,
    added_at                    TEXT NOT NULL,
    workload_key                TEXT NOT NULL,
    labels_key                  TEXT NOT NULL,
    source_sha256               TEXT NOT NULL,
    block                       INTEGER NOT NULL,
    source_input                TEXT NOT NULL,
    command                     TEXT,
    tool                        TEXT NOT NULL,
    tool_version                TEXT,
    parser                      TEXT NOT NULL,
    variant                     TEXT,
    format                      TEXT NOT NULL,
    model                       TEXT,
    dataset                     TEXT,
    input_len                   INTEGER,
    output_len                  INTEGER,
    max_concurrency             INTEGER,
    request_rate                REAL,
    tpot_ms_mean                REAL,
    per_user_decode_tok_per_s   REAL,
    ttft_ms_mean                REAL,
    ttft_ms_p99                 REAL,
    e2e_ms_mean                 REAL,
    e2e_ms_p99                  REAL,
    output_tok_per_s            REAL,
    semantics                   TEXT NOT NULL,
    verdict                     TEXT NOT NULL,
    run_json                    TEXT NOT NULL,
    UNIQUE (workload_key, labels_key, source_sha256, block)
);
CREATE INDEX runs_workload ON runs (workload_key, added_at);
CREATE INDEX runs_tool ON runs (tool, tool_version);
CREATE INDEX runs_model ON runs (model, input_len, output_len, max_concurrency, request_rate);
CREATE TABLE run_labels (
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key     TEXT NOT NULL,
    value   TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE INDEX run_labels_key ON run_labels (key, value);
",
];
