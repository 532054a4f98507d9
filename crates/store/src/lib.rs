//! A store of accepted runs, in SQLite or PostgreSQL: `bench-normalize store` and `regress`
//! (docs/store.md). A
//! feature on top of the library (`store`, on by default), outside the data path: runs are read
//! by the library's ordinary pipeline ([`read_input`]), and only accepted ones are kept.
//!
//! * One row per run, under its **natural key**: the workload ([`WorkloadKey`]), the labels given
//!   when it was added, the SHA-256 of its source file and its block in that file. Adding the
//!   same block again is no new row ([`Added::Already`]).
//! * The whole canonical run as JSON beside indexed columns (tool, model, workload, the derived
//!   TPOT and per-user rate, TTFT and E2E, throughput), its semantics and provenance.
//! * The schema is versioned: migrations run when a store is opened ([`SCHEMA_VERSION`]).
//! * An add is one transaction: a failure leaves the store as it was.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use bench_normalize_analysis::compare::Fig;
pub use bench_normalize_analysis::compare::WorkloadKey;
use bench_normalize_core::report::{Run, Verdict};
use bench_normalize_core::vocabulary::workload;
use bench_normalize_core::{Collect, ExitCode, Options};

mod db;
pub mod history;
pub mod regress;
mod schema;
pub use bench_normalize_analysis::stats;

pub use db::{DbError, is_postgres};
pub use schema::SCHEMA_VERSION;

use db::{Db, Ty, Val};

/// The variable `--store` defaults to.
pub const STORE_VAR: &str = "BENCH_NORMALIZE_STORE";

/// Labels given on the command line (`--label commit=abc`), sorted by key.
pub type Labels = BTreeMap<String, String>;

/// What can go wrong with a store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database refused (not a SQLite file, a locked or read-only file, a full disk; a
    /// PostgreSQL server that cannot be reached or refuses).
    #[error("{path}: store: {source}")]
    Db {
        path: String,
        #[source]
        source: DbError,
    },
    /// The store's folder could not be created.
    #[error("{path}: cannot create the store's folder: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A store written by a newer bench-normalize.
    #[error("{path}: the store has schema version {found}; this bench-normalize knows up to {supported}: upgrade it")]
    TooNew { path: String, found: i64, supported: i64 },
    /// A store to read that does not exist.
    #[error("{path}: no store there (`store add` creates it)")]
    Missing { path: String },
    /// No run of that id.
    #[error("no run {0} in the store")]
    NotFound(i64),
    /// A stored run's JSON that no longer reads as a run.
    #[error("run {id} in the store: {message}")]
    Corrupt { id: i64, message: String },
}

impl StoreError {
    /// 4 for a database or file error, 3 for nothing to read (no store, no such run).
    pub fn exit_code(&self) -> ExitCode {
        match self {
            StoreError::Db { .. } | StoreError::Io { .. } | StoreError::TooNew { .. } => ExitCode::Io,
            StoreError::Missing { .. } | StoreError::NotFound(_) | StoreError::Corrupt { .. } => ExitCode::NoResult,
        }
    }

    /// The store's path, when the error is about it.
    pub fn path(&self) -> Option<&str> {
        match self {
            StoreError::Db { path, .. }
            | StoreError::Io { path, .. }
            | StoreError::TooNew { path, .. }
            | StoreError::Missing { path } => Some(path),
            _ => None,
        }
    }
}

/// `--label KEY=VALUE`: a key of letters, digits, `_`, `-`, `.`; any value (empty allowed).
pub fn parse_label(s: &str) -> Result<(String, String), String> {
    let (k, v) = s.split_once('=').ok_or_else(|| format!("{s:?}: a label is KEY=VALUE (commit=abc123)"))?;
    let k = k.trim();
    if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
        return Err(format!("{k:?}: a label's key is letters, digits, `_`, `-` or `.`"));
    }
    Ok((k.to_string(), v.to_string()))
}

/// Where the store is when neither `--store` nor `$BENCH_NORMALIZE_STORE` says:
/// `$XDG_DATA_HOME/bench-normalize/store.sqlite`, else `$HOME/.local/share/bench-normalize/store.sqlite`.
pub fn default_path() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(|| {
        std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".local/share"))
    })?;
    Some(data.join("bench-normalize").join("store.sqlite"))
}

// ------------------------------------------------------------------------------------------------
// Reading inputs

/// One input read for the store: its runs (every verdict), the SHA-256 of its bytes, and the
/// problems met reading it.
#[derive(Debug)]
pub struct Input {
    pub name: String,
    pub sha256: String,
    pub runs: Vec<Run>,
    pub errors: Vec<bench_normalize_core::Error>,
}

/// Read one input (`-` is standard input) with the library's pipeline, as `bench-normalize`
/// reads it; its bytes are hashed as read.
pub fn read_input(path: &Path, opts: &Options) -> Input {
    let name = path.display().to_string();
    let mut input = Input { name: name.clone(), sha256: String::new(), runs: Vec::new(), errors: Vec::new() };
    let bytes = if name == "-" {
        let mut b = Vec::new();
        std::io::stdin().lock().read_to_end(&mut b).map(|_| b)
    } else {
        std::fs::read(path)
    };
    let bytes = match bytes {
        Ok(b) => b,
        Err(source) => {
            input.errors.push(bench_normalize_core::Error::Io { input: name, source });
            return input;
        }
    };
    input.sha256 = hex(&Sha256::digest(&bytes));
    let mut sink = Collect::default();
    if let Err(e) = bench_normalize_core::normalize(&bytes[..], &name, opts, &mut sink) {
        input.errors.push(e);
    }
    input.errors.append(&mut sink.notes);
    input.runs = sink.runs;
    input
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

// ------------------------------------------------------------------------------------------------
// The natural key and the indexed columns

/// The command that produced a run: `run`'s command as run, else the one the tool printed.
fn command(run: &Run) -> Option<String> {
    if let Some(r) = &run.source.run {
        return Some(r.command.join(" "));
    }
    run.text(workload::COMMAND).map(str::to_string)
}

fn tool_version(run: &Run) -> Option<String> {
    run.text(workload::BENCHMARK_TOOL_VERSION)
        .map(str::to_string)
        .or_else(|| run.source.run.as_ref().and_then(|r| r.tool_version.clone()))
}

/// Why a run is not stored: its failed checks (info ones aside).
pub fn refusal(run: &Run) -> String {
    let verdict = match run.verdict {
        Verdict::Accepted => "accepted",
        Verdict::Rejected => "rejected",
        Verdict::Unusable => "unusable",
    };
    match run.failures() {
        failed if failed.is_empty() => format!("the run is {verdict}"),
        failed => format!("the run is {verdict}: {failed}"),
    }
}

// ------------------------------------------------------------------------------------------------
// Rows

/// A stored run as `store list`, `show` and `export` give it: the indexed columns, and the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stored {
    pub id: i64,
    pub added_at: String,
    pub workload: WorkloadKey,
    pub labels: Labels,
    pub source_sha256: String,
    pub block: i64,
    pub source_input: String,
    pub command: Option<String>,
    pub tool: String,
    pub tool_version: Option<String>,
    pub parser: String,
    pub variant: Option<String>,
    pub format: String,
    pub tpot_ms_mean: Option<f64>,
    pub per_user_decode_tok_per_s: Option<f64>,
    pub ttft_ms_mean: Option<f64>,
    pub ttft_ms_p99: Option<f64>,
    pub e2e_ms_mean: Option<f64>,
    pub e2e_ms_p99: Option<f64>,
    pub output_tok_per_s: Option<f64>,
    pub semantics: serde_json::Value,
    pub verdict: String,
    /// The canonical run; `null` in `store list`.
    #[serde(skip_serializing_if = "serde_json::Value::is_null")]
    pub run: serde_json::Value,
}

impl Stored {
    /// The stored run, read back.
    pub fn to_run(&self) -> Result<Run, StoreError> {
        serde_json::from_value(self.run.clone())
            .map_err(|e| StoreError::Corrupt { id: self.id, message: e.to_string() })
    }
}

const COLUMNS: &str = "id, added_at, workload_key, source_sha256, block, source_input, command, tool, tool_version, \
     parser, variant, format, tpot_ms_mean, per_user_decode_tok_per_s, ttft_ms_mean, ttft_ms_p99, e2e_ms_mean, \
     e2e_ms_p99, output_tok_per_s, semantics, verdict, labels_key";

/// The types of [`COLUMNS`], then `run_json`.
const TYPES: [Ty; 23] = [
    Ty::I,
    Ty::T,
    Ty::T,
    Ty::T,
    Ty::I,
    Ty::T,
    Ty::T,
    Ty::T,
    Ty::T,
    Ty::T,
    Ty::T,
    Ty::T,
    Ty::F,
    Ty::F,
    Ty::F,
    Ty::F,
    Ty::F,
    Ty::F,
    Ty::F,
    Ty::T,
    Ty::T,
    Ty::T,
    Ty::T,
];

fn row_of(row: Vec<Val>) -> Stored {
    let mut it = row.into_iter();
    let mut next = || it.next().unwrap_or(Val::T(None));
    let json = |s: Option<String>| s.and_then(|s| serde_json::from_str(&s).ok()).unwrap_or(serde_json::Value::Null);
    Stored {
        id: next().i().unwrap_or_default(),
        added_at: next().t().unwrap_or_default(),
        workload: next().t().and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default(),
        source_sha256: next().t().unwrap_or_default(),
        block: next().i().unwrap_or_default(),
        source_input: next().t().unwrap_or_default(),
        command: next().t(),
        tool: next().t().unwrap_or_default(),
        tool_version: next().t(),
        parser: next().t().unwrap_or_default(),
        variant: next().t(),
        format: next().t().unwrap_or_default(),
        tpot_ms_mean: next().f(),
        per_user_decode_tok_per_s: next().f(),
        ttft_ms_mean: next().f(),
        ttft_ms_p99: next().f(),
        e2e_ms_mean: next().f(),
        e2e_ms_p99: next().f(),
        output_tok_per_s: next().f(),
        semantics: json(next().t()),
        verdict: next().t().unwrap_or_default(),
        labels: next().t().and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default(),
        run: json(next().t()),
    }
}

/// What became of a run handed to [`Store::add`].
#[derive(Debug, Clone, PartialEq)]
pub enum Added {
    /// Stored as a new row.
    Stored(i64),
    /// The same block of the same file, with the same workload and labels, was stored before.
    Already(i64),
    /// Not accepted: not stored ([`refusal`] says why).
    Refused(String),
}

/// Which stored runs to list.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Runs carrying every one of these labels.
    pub labels: Labels,
    /// Runs of this workload only.
    pub workload: Option<WorkloadKey>,
    /// Runs of this tool only (`source.tool`).
    pub tool: Option<String>,
    /// The latest `n` only (by time added).
    pub last: Option<usize>,
    /// Only runs added in the last `within_s` seconds (by the store's clock).
    pub within_s: Option<u64>,
}

// ------------------------------------------------------------------------------------------------
// The store

/// An open store: a SQLite file, or a PostgreSQL database (`postgresql://...`).
pub struct Store {
    db: Db,
    /// The file, or the URL with its password hidden.
    path: String,
}

impl Store {
    /// Open the store at `path` (a file, or a `postgresql://` URL): a file is created (with its
    /// folder) when missing; migrations run.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let text = path.to_string_lossy();
        if db::is_postgres(&text) {
            return Store::connect(Db::postgres(&text), db::redact(&text), true);
        }
        let name = path.display().to_string();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Io { path: name.clone(), source })?;
        }
        Store::connect(Db::sqlite(path), name, true)
    }

    /// Open an existing store, for reading: a missing file, or a database without the store's
    /// tables, is [`StoreError::Missing`] (nothing is created).
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        let text = path.to_string_lossy();
        if db::is_postgres(&text) {
            return Store::connect(Db::postgres(&text), db::redact(&text), false);
        }
        let name = path.display().to_string();
        if !path.exists() {
            return Err(StoreError::Missing { path: name });
        }
        Store::connect(Db::sqlite(path), name, false)
    }

    fn connect(db: Result<Db, DbError>, path: String, create: bool) -> Result<Store, StoreError> {
        let db = db.map_err(|source| StoreError::Db { path: path.clone(), source })?;
        let mut store = Store { db, path };
        store.migrate(create)?;
        Ok(store)
    }

    fn err(&self) -> impl Fn(DbError) -> StoreError + 'static {
        let path = self.path.clone();
        move |source| StoreError::Db { path: path.clone(), source }
    }

    /// Whether the store is a PostgreSQL database.
    /// The file, or the URL with its password hidden: for messages.
    pub fn name(&self) -> &str {
        &self.path
    }

    pub fn is_postgres(&self) -> bool {
        self.db.is_postgres()
    }

    /// The schema version of the store (after migrations: [`SCHEMA_VERSION`]).
    pub fn version(&mut self) -> Result<i64, StoreError> {
        let err = self.err();
        let rows = self.db.rows("SELECT COALESCE(MAX(version), 0) FROM schema_version", &[], &[Ty::I]).map_err(err)?;
        Ok(rows.into_iter().next().and_then(|r| r.into_iter().next()).and_then(Val::i).unwrap_or(0))
    }

    /// Run `f` in a transaction: committed when it returns `Ok`, rolled back otherwise.
    fn transaction<T>(&mut self, f: impl FnOnce(&mut Store) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let err = self.err();
        self.db.batch("BEGIN").map_err(&err)?;
        match f(self) {
            Ok(v) => {
                self.db.batch("COMMIT").map_err(err)?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.db.batch("ROLLBACK");
                Err(e)
            }
        }
    }

    fn migrate(&mut self, create: bool) -> Result<(), StoreError> {
        let postgres = self.db.is_postgres();
        let now = self.db.now_sql();
        self.transaction(|s| {
            let err = s.err();
            if postgres {
                // One migration at a time when several clients open the store at once.
                s.db.batch("SELECT pg_advisory_xact_lock(7306117596221653554)").map_err(&err)?;
            }
            let exists = if postgres {
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() \
                 AND table_name = 'schema_version'"
            } else {
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
            };
            let count =
                |rows: Vec<Vec<Val>>| rows.into_iter().next().and_then(|r| r.into_iter().next()).and_then(Val::i);
            let has_table = count(s.db.rows(exists, &[], &[Ty::I]).map_err(&err)?).unwrap_or(0) > 0;
            let found = if has_table {
                count(s.db.rows("SELECT COALESCE(MAX(version), 0) FROM schema_version", &[], &[Ty::I]).map_err(&err)?)
                    .unwrap_or(0)
            } else if !create {
                return Err(StoreError::Missing { path: s.path.clone() });
            } else {
                0
            };
            if found > SCHEMA_VERSION {
                return Err(StoreError::TooNew { path: s.path.clone(), found, supported: SCHEMA_VERSION });
            }
            for i in (found as usize)..schema::MIGRATIONS.len() {
                s.db.batch(&schema::migration(i, postgres)).map_err(&err)?;
                let insert = format!("INSERT INTO schema_version (version, applied_at) VALUES ($1, {now})");
                s.db.exec(&insert, &[Val::I(Some(i as i64 + 1))]).map_err(&err)?;
            }
            if !postgres && found < SCHEMA_VERSION {
                s.db.batch(&format!("PRAGMA user_version = {SCHEMA_VERSION};")).map_err(&err)?;
            }
            Ok(())
        })
    }

    /// Add runs, each with the SHA-256 of its source, all under `labels`, in one transaction:
    /// accepted runs are stored (or found stored), the others refused. On an error nothing is
    /// written.
    pub fn add(&mut self, runs: &[(&Run, &str)], labels: &Labels) -> Result<Vec<Added>, StoreError> {
        let labels_key = serde_json::to_string(labels).expect("labels serialize");
        let insert = format!(
            "INSERT INTO runs (added_at, workload_key, labels_key, source_sha256, block, source_input, command, \
             tool, tool_version, parser, variant, format, model, dataset, input_len, output_len, max_concurrency, \
             request_rate, tpot_ms_mean, per_user_decode_tok_per_s, ttft_ms_mean, ttft_ms_p99, e2e_ms_mean, \
             e2e_ms_p99, output_tok_per_s, semantics, verdict, run_json) \
             VALUES ({}, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, \
             $21, $22, $23, $24, $25, 'accepted', $26) \
             ON CONFLICT (workload_key, labels_key, source_sha256, block) DO NOTHING RETURNING id",
            self.db.now_sql()
        );
        let find = "SELECT id FROM runs WHERE workload_key = $1 AND labels_key = $2 AND source_sha256 = $3 \
                    AND block = $4";
        self.transaction(|s| {
            let err = s.err();
            let mut out = Vec::with_capacity(runs.len());
            for (run, sha) in runs {
                if run.verdict != Verdict::Accepted {
                    out.push(Added::Refused(refusal(run)));
                    continue;
                }
                let w = WorkloadKey::of(run);
                let wk = w.text();
                let block = run.source.block as i64;
                let t = |v: Option<String>| Val::T(v);
                let u = |v: Option<u64>| Val::I(v.map(|x| x as i64));
                let key =
                    [t(Some(wk.clone())), t(Some(labels_key.clone())), t(Some(sha.to_string())), Val::I(Some(block))];
                let mut args = key.to_vec();
                args.extend([
                    t(Some(run.source.input.clone())),
                    t(command(run)),
                    t(Some(run.source.tool.clone())),
                    t(tool_version(run)),
                    t(Some(run.source.parser.clone())),
                    t(run.source.variant.clone()),
                    t(Some(run.source.format.as_str().to_string())),
                    t(w.model.clone()),
                    t(w.dataset.clone()),
                    u(w.input_len),
                    u(w.output_len),
                    u(w.max_concurrency),
                    Val::F(w.request_rate),
                    Val::F(Fig::Tpot.value(run)),
                    Val::F(Fig::PerUser.value(run)),
                    Val::F(Fig::TtftMean.value(run)),
                    Val::F(Fig::TtftP99.value(run)),
                    Val::F(Fig::E2eMean.value(run)),
                    Val::F(Fig::E2eP99.value(run)),
                    Val::F(Fig::OutputThroughput.value(run)),
                    t(Some(serde_json::to_string(&run.source.semantics).expect("semantics serialize"))),
                    t(Some(serde_json::to_string(run).expect("a run serializes"))),
                ]);
                let inserted = s.db.rows(&insert, &args, &[Ty::I]).map_err(&err)?;
                if let Some(id) = inserted.into_iter().next().and_then(|r| r.into_iter().next()).and_then(Val::i) {
                    for (k, v) in labels {
                        s.db.exec(
                            "INSERT INTO run_labels (run_id, key, value) VALUES ($1, $2, $3)",
                            &[Val::I(Some(id)), t(Some(k.clone())), t(Some(v.clone()))],
                        )
                        .map_err(&err)?;
                    }
                    out.push(Added::Stored(id));
                } else {
                    let found = s.db.rows(find, &key, &[Ty::I]).map_err(&err)?;
                    let id = found.into_iter().next().and_then(|r| r.into_iter().next()).and_then(Val::i).unwrap_or(0);
                    out.push(Added::Already(id));
                }
            }
            Ok(out)
        })
    }

    /// The stored runs that pass `filter`, latest first (with their run JSON when `with_run`).
    pub fn list(&mut self, filter: &Filter, with_run: bool) -> Result<Vec<Stored>, StoreError> {
        let mut sql = format!(
            "SELECT {COLUMNS}{} FROM runs WHERE verdict = 'accepted'",
            if with_run { ", run_json" } else { "" }
        );
        let mut args: Vec<Val> = Vec::new();
        let mut arg = |sql: &mut String, text: &str, v: Val| {
            args.push(v);
            sql.push_str(&text.replace("$?", &format!("${}", args.len())));
        };
        if let Some(w) = &filter.workload {
            arg(&mut sql, " AND workload_key = $?", Val::T(Some(w.text())));
        }
        if let Some(t) = &filter.tool {
            arg(&mut sql, " AND tool = $?", Val::T(Some(t.clone())));
        }
        for (k, v) in &filter.labels {
            arg(
                &mut sql,
                " AND EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = runs.id AND l.key = $?",
                Val::T(Some(k.clone())),
            );
            arg(&mut sql, " AND l.value = $?)", Val::T(Some(v.clone())));
        }
        if let Some(secs) = filter.within_s {
            sql.push_str(&format!(" AND added_at >= {}", self.db.ago_sql(secs)));
        }
        sql.push_str(" ORDER BY added_at DESC, id DESC");
        if let Some(n) = filter.last {
            arg(&mut sql, " LIMIT $?", Val::I(Some(n as i64)));
        }
        let types = if with_run { &TYPES[..] } else { &TYPES[..22] };
        let rows = self.db.rows(&sql, &args, types).map_err(self.err())?;
        Ok(rows.into_iter().map(row_of).collect())
    }

    /// One stored run, with its run JSON.
    pub fn get(&mut self, id: i64) -> Result<Stored, StoreError> {
        let sql = format!("SELECT {COLUMNS}, run_json FROM runs WHERE id = $1");
        let rows = self.db.rows(&sql, &[Val::I(Some(id))], &TYPES).map_err(self.err())?;
        rows.into_iter().next().map(row_of).ok_or(StoreError::NotFound(id))
    }

    /// Every stored run, oldest first (by id), with its run JSON: what `store export` writes.
    pub fn export(&mut self) -> Result<Vec<Stored>, StoreError> {
        let sql = format!("SELECT {COLUMNS}, run_json FROM runs ORDER BY id");
        let rows = self.db.rows(&sql, &[], &TYPES).map_err(self.err())?;
        Ok(rows.into_iter().map(row_of).collect())
    }
}

/// The columns `store export --format csv` writes, in order (the run's JSON aside).
pub const CSV_COLUMNS: [&str; 24] = [
    "id",
    "added_at",
    "tool",
    "tool_version",
    "parser",
    "model",
    "dataset",
    "input_len",
    "output_len",
    "max_concurrency",
    "request_rate",
    "tpot_ms_mean",
    "per_user_decode_tok_per_s",
    "ttft_ms_mean",
    "ttft_ms_p99",
    "e2e_ms_mean",
    "e2e_ms_p99",
    "output_tok_per_s",
    "labels",
    "source_input",
    "source_sha256",
    "block",
    "command",
    "verdict",
];

/// A stored run as a CSV record of [`CSV_COLUMNS`].
pub fn csv_record(s: &Stored) -> Vec<String> {
    let f = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    let u = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
    vec![
        s.id.to_string(),
        s.added_at.clone(),
        s.tool.clone(),
        s.tool_version.clone().unwrap_or_default(),
        s.parser.clone(),
        s.workload.model.clone().unwrap_or_default(),
        s.workload.dataset.clone().unwrap_or_default(),
        u(s.workload.input_len),
        u(s.workload.output_len),
        u(s.workload.max_concurrency),
        f(s.workload.request_rate),
        f(s.tpot_ms_mean),
        f(s.per_user_decode_tok_per_s),
        f(s.ttft_ms_mean),
        f(s.ttft_ms_p99),
        f(s.e2e_ms_mean),
        f(s.e2e_ms_p99),
        f(s.output_tok_per_s),
        serde_json::to_string(&s.labels).expect("labels serialize"),
        s.source_input.clone(),
        s.source_sha256.clone(),
        s.block.to_string(),
        s.command.clone().unwrap_or_default(),
        s.verdict.clone(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_store_has_the_schema_and_a_newer_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/s.sqlite");
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.version().unwrap(), SCHEMA_VERSION);
        let one = |s: &mut Store, sql: &str| s.db.rows(sql, &[], &[Ty::I]).unwrap()[0][0].clone().i().unwrap();
        assert_eq!(one(&mut store, "PRAGMA user_version"), SCHEMA_VERSION);
        // Opened again: no migration run twice.
        drop(store);
        let mut store = Store::open(&path).unwrap();
        assert_eq!(one(&mut store, "SELECT count(*) FROM schema_version"), 1);
        store.db.exec("INSERT INTO schema_version VALUES ($1, 'later')", &[Val::I(Some(SCHEMA_VERSION + 1))]).unwrap();
        drop(store);
        assert!(matches!(Store::open(&path), Err(StoreError::TooNew { found, .. }) if found == SCHEMA_VERSION + 1));
    }

    #[test]
    fn labels_are_key_equals_value() {
        assert_eq!(parse_label("commit=abc=d").unwrap(), ("commit".into(), "abc=d".into()));
        assert_eq!(parse_label("gpu=").unwrap(), ("gpu".into(), String::new()));
        assert!(parse_label("nokey").is_err());
        assert!(parse_label("=v").is_err());
        assert!(parse_label("a b=v").is_err());
    }

    #[test]
    fn a_failed_add_leaves_the_store_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        let runs = bench_normalize_core::normalize_str(
            &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../samples/captured/vllm-s1.stdout.txt"))
                .unwrap(),
            "a.log",
        )
        .unwrap();
        assert_eq!(store.add(&[(&runs[0], "aa")], &Labels::new()).unwrap(), vec![Added::Stored(1)]);
        // A trigger fails the second insert of a batch: the first of it is rolled back too.
        store
            .db
            .batch(
                "CREATE TRIGGER no_bb BEFORE INSERT ON runs WHEN NEW.source_sha256 = 'bb' \
                 BEGIN SELECT RAISE(ABORT, 'refused'); END;",
            )
            .unwrap();
        let err = store.add(&[(&runs[0], "cc"), (&runs[0], "bb")], &Labels::new());
        assert!(matches!(err, Err(StoreError::Db { .. })), "{err:?}");
        assert_eq!(store.list(&Filter::default(), false).unwrap().len(), 1);
        assert_eq!(store.add(&[(&runs[0], "aa")], &Labels::new()).unwrap(), vec![Added::Already(1)]);
    }
}
