//! The two databases a store lives in, behind one small interface: SQLite (a file, compiled in)
//! and PostgreSQL (`postgresql://...`, the sync client without TLS). Statements are written once,
//! with `$1`, `$2`, ... placeholders, which both read; values and rows pass as [`Val`]s.

use std::fmt;

/// A value bound to a statement or read from a row; its null is typed (PostgreSQL needs it).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Val {
    I(Option<i64>),
    F(Option<f64>),
    T(Option<String>),
}

impl Val {
    pub(super) fn i(self) -> Option<i64> {
        if let Val::I(v) = self { v } else { None }
    }
    pub(super) fn f(self) -> Option<f64> {
        if let Val::F(v) = self { v } else { None }
    }
    pub(super) fn t(self) -> Option<String> {
        if let Val::T(v) = self { v } else { None }
    }
}

/// The type a row's column is read as.
#[derive(Debug, Clone, Copy)]
pub(super) enum Ty {
    I,
    F,
    T,
}

/// An error of either database.
#[derive(Debug)]
pub enum DbError {
    Sqlite(rusqlite::Error),
    Postgres(postgres::Error),
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            DbError::Sqlite(e) => write!(f, "{e}"),
            // The server's own message when there is one (the client's Display says only "db error").
            DbError::Postgres(e) => match e.as_db_error() {
                Some(db) => write!(f, "{}: {}", db.severity(), db.message()),
                None => write!(f, "{e}"),
            },
        }
    }
}

impl std::error::Error for DbError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DbError::Sqlite(e) => Some(e),
            DbError::Postgres(e) => Some(e),
        }
    }
}

/// An open connection.
pub(super) enum Db {
    Sqlite(rusqlite::Connection),
    Postgres(Box<postgres::Client>),
}

/// Whether a `--store` value names a PostgreSQL server rather than a file.
pub fn is_postgres(store: &str) -> bool {
    store.starts_with("postgresql://") || store.starts_with("postgres://")
}

/// A PostgreSQL URL with its password hidden, for messages (in the user part and as a
/// `password=` parameter).
pub fn redact(url: &str) -> String {
    let url = match url.split_once('?') {
        Some((head, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|p| if p.starts_with("password=") { "password=***".to_string() } else { p.to_string() })
                .collect();
            format!("{head}?{}", params.join("&"))
        }
        None => url.to_string(),
    };
    let Some((scheme, rest)) = url.split_once("://") else { return url };
    let (authority, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((userinfo, host)) if userinfo.contains(':') => {
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}{tail}")
        }
        _ => url,
    }
}

impl Db {
    pub(super) fn sqlite(path: &std::path::Path) -> Result<Db, DbError> {
        let conn = rusqlite::Connection::open(path).map_err(DbError::Sqlite)?;
        conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(DbError::Sqlite)?;
        conn.execute_batch("PRAGMA foreign_keys = ON;").map_err(DbError::Sqlite)?;
        Ok(Db::Sqlite(conn))
    }

    pub(super) fn postgres(url: &str) -> Result<Db, DbError> {
        let client = postgres::Client::connect(url, postgres::NoTls).map_err(DbError::Postgres)?;
        Ok(Db::Postgres(Box::new(client)))
    }

    pub(super) fn is_postgres(&self) -> bool {
        matches!(self, Db::Postgres(_))
    }

    /// The current time as the `added_at` text (RFC 3339 UTC, milliseconds), in SQL.
    pub(super) fn now_sql(&self) -> &'static str {
        match self {
            Db::Sqlite(_) => "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
            Db::Postgres(_) => "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')",
        }
    }

    /// The time `seconds` before now as `added_at` text, in SQL (the database's clock, as
    /// `added_at` is).
    pub(super) fn ago_sql(&self, seconds: u64) -> String {
        match self {
            Db::Sqlite(_) => format!("strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-{seconds} seconds')"),
            Db::Postgres(_) => format!(
                "to_char((clock_timestamp() - interval '{seconds} seconds') AT TIME ZONE 'UTC', \
                 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
            ),
        }
    }

    /// Statements without parameters, separated by `;`.
    pub(super) fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        match self {
            Db::Sqlite(c) => c.execute_batch(sql).map_err(DbError::Sqlite),
            Db::Postgres(c) => c.batch_execute(sql).map_err(DbError::Postgres),
        }
    }

    /// One statement: the rows it changed.
    pub(super) fn exec(&mut self, sql: &str, args: &[Val]) -> Result<u64, DbError> {
        match self {
            Db::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql).map_err(DbError::Sqlite)?;
                let n =
                    stmt.execute(rusqlite::params_from_iter(args.iter().map(sqlite_value))).map_err(DbError::Sqlite)?;
                Ok(n as u64)
            }
            Db::Postgres(c) => {
                let boxed = pg_values(args);
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
                c.execute(sql, &refs).map_err(DbError::Postgres)
            }
        }
    }

    /// One query: its rows, each column read as `types` says.
    pub(super) fn rows(&mut self, sql: &str, args: &[Val], types: &[Ty]) -> Result<Vec<Vec<Val>>, DbError> {
        match self {
            Db::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql).map_err(DbError::Sqlite)?;
                let rows = stmt
                    .query_map(rusqlite::params_from_iter(args.iter().map(sqlite_value)), |r| {
                        types
                            .iter()
                            .enumerate()
                            .map(|(i, t)| {
                                Ok(match t {
                                    Ty::I => Val::I(r.get(i)?),
                                    Ty::F => Val::F(r.get(i)?),
                                    Ty::T => Val::T(r.get(i)?),
                                })
                            })
                            .collect::<rusqlite::Result<Vec<Val>>>()
                    })
                    .map_err(DbError::Sqlite)?;
                rows.collect::<Result<Vec<_>, _>>().map_err(DbError::Sqlite)
            }
            Db::Postgres(c) => {
                let boxed = pg_values(args);
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
                let rows = c.query(sql, &refs).map_err(DbError::Postgres)?;
                rows.iter()
                    .map(|r| {
                        types
                            .iter()
                            .enumerate()
                            .map(|(i, t)| {
                                Ok(match t {
                                    Ty::I => Val::I(r.try_get(i)?),
                                    Ty::F => Val::F(r.try_get(i)?),
                                    Ty::T => Val::T(r.try_get(i)?),
                                })
                            })
                            .collect::<Result<Vec<Val>, postgres::Error>>()
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(DbError::Postgres)
            }
        }
    }
}

fn sqlite_value(v: &Val) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    match v.clone() {
        Val::I(Some(x)) => Value::Integer(x),
        Val::F(Some(x)) => Value::Real(x),
        Val::T(Some(x)) => Value::Text(x),
        _ => Value::Null,
    }
}

fn pg_values(args: &[Val]) -> Vec<Box<dyn postgres::types::ToSql + Sync>> {
    args.iter()
        .map(|v| -> Box<dyn postgres::types::ToSql + Sync> {
            match v.clone() {
                Val::I(x) => Box::new(x),
                Val::F(x) => Box::new(x),
                Val::T(x) => Box::new(x),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_password_is_never_shown() {
        assert_eq!(super::redact("postgresql://u:secret@h:5432/db"), "postgresql://u:***@h:5432/db");
        assert_eq!(super::redact("postgresql://u@h/db"), "postgresql://u@h/db");
        assert_eq!(super::redact("postgres://h/db?x=1"), "postgres://h/db?x=1");
        assert_eq!(super::redact("postgres://u@h/db?password=s&x=1"), "postgres://u@h/db?password=***&x=1");
    }
}
