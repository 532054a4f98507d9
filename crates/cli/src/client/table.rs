//! The clients `run` knows, as data: `clients.toml` (one `[[client]]` table per client) read into
//! [`Client`]s, which the generic routines of `recognise.rs`, `flags.rs` and `result_file.rs`
//! follow. Adding a client, or a flag to one, is an edit of that file, not of code.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde::Deserialize;

/// One benchmark client `run` knows: how it is invoked, what it needs added, where its result is.
#[derive(Debug)]
pub struct Client {
    /// Stable id, written as `source.run.client`.
    pub id: String,
    /// The tool's name as dstack's benchmark report gives it (`workload.benchmark_tool`).
    pub tool: String,
    /// The Python distribution whose version is the client's version.
    pub package: String,
    /// Executables that run it, by file name, with their subcommand words: `vllm bench serve`.
    pub programs: Vec<Program>,
    /// Python modules run with `-m`: `python -m sglang.bench_serving`.
    pub modules: Vec<String>,
    /// Python scripts, by the end of their path: `python benchmarks/benchmark_serving.py`.
    pub scripts: Vec<String>,
    /// What is added where the user did not set it, in this order.
    pub adds: Vec<Add>,
    /// Where it writes its result file.
    pub result: ResultAt,
    /// Flags whose value is a workload figure: (flag, canonical path). Used only where the
    /// client's output does not give the figure itself.
    pub workload: Vec<(String, String)>,
    /// Flags read into the workload only when `--dataset-name` is `random` (the random dataset's
    /// lengths are the requested lengths; another dataset's are its own).
    pub random_lengths: Vec<(String, String)>,
    /// The key (a dotted path) of its result file that states its own version
    /// (`aiperf_version`, `metadata.guidellm_version`), when it writes one.
    pub version_key: Option<String>,
}

impl PartialEq for Client {
    fn eq(&self, other: &Client) -> bool {
        self.id == other.id
    }
}

/// An executable and the subcommand words after it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Program {
    pub name: String,
    pub words: Vec<String>,
}

/// A flag `run` adds when the user did not set it.
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Add {
    /// A switch: `--save-result`.
    Switch { flag: String },
    /// A comma-separated list that must name `need`: `default` when the user gave none, the
    /// user's list with `need` appended otherwise (`ttft,tpot` -> `ttft,tpot,e2el`).
    List { flag: String, default: String, need: String },
    /// A path in the private directory (`name`, or the directory itself when empty), unless the
    /// user set this flag or one of `unless`.
    Private {
        flag: String,
        name: String,
        #[serde(default)]
        unless: Vec<String>,
    },
    /// A fixed value, unless the user set this flag or one of `unless`.
    Value {
        flag: String,
        value: String,
        #[serde(default)]
        unless: Vec<String>,
    },
}

impl Add {
    /// The flag this adds (the tables' own test holds every one to the shape of a flag).
    #[cfg(test)]
    pub fn flag(&self) -> &str {
        match self {
            Add::Switch { flag } | Add::List { flag, .. } | Add::Private { flag, .. } | Add::Value { flag, .. } => flag,
        }
    }
}

/// Where a client writes its result file.
#[derive(Debug, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum ResultAt {
    /// The path a flag names.
    File { file: String },
    /// `dir/name` from two flags; with the folder alone (the client names the file), the
    /// newest `*.ext` file in it; with the name alone, the name (relative to the working directory).
    DirAndName { dir: String, name: String, ext: String },
    /// A file of one of these names anywhere below the folder a flag names.
    Under { under: String, names: Vec<String> },
}

/// A program put in front of a client (`timeout 600 vllm bench serve ...`): how to find the
/// command it runs.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wrapper {
    /// Its file names.
    pub names: Vec<String>,
    /// Subcommand words after the name: `uv run`.
    #[serde(default)]
    pub words: Vec<String>,
    /// Options that take a value; any other word starting with `-` is a switch.
    #[serde(default)]
    pub values: Vec<String>,
    /// Options after which what follows is no command.
    #[serde(default)]
    pub refuse: Vec<String>,
    /// Words between its options and the command.
    #[serde(default)]
    pub operands: usize,
    /// `NAME=value` words before the command.
    #[serde(default)]
    pub assignments: bool,
    /// It decides which client runs: the version is asked through it too.
    #[serde(default)]
    pub launcher: bool,
    /// Options naming the directory the command runs in.
    #[serde(default)]
    pub chdir: Vec<String>,
}

/// `clients.toml` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClientsFile {
    workload: HashMap<String, WorkloadSet>,
    client: Vec<ClientTable>,
    #[serde(default)]
    wrapper: Vec<Wrapper>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadSet {
    flags: Vec<(String, String)>,
    #[serde(default)]
    random_lengths: Vec<(String, String)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClientTable {
    id: String,
    tool: String,
    package: String,
    #[serde(default)]
    programs: Vec<Program>,
    #[serde(default)]
    modules: Vec<String>,
    #[serde(default)]
    scripts: Vec<String>,
    #[serde(default)]
    add: Vec<Add>,
    result: ResultAt,
    workload: String,
    #[serde(default)]
    version_key: Option<String>,
}

/// The client tables, read from their TOML text.
#[cfg(test)]
fn load(text: &str) -> Result<Vec<Client>, String> {
    load_all(text).map(|(c, _)| c)
}

/// The client and wrapper tables, read from their TOML text.
fn load_all(text: &str) -> Result<(Vec<Client>, Vec<Wrapper>), String> {
    let file: ClientsFile = toml::from_str(text).map_err(|e| e.to_string())?;
    let wrappers = file.wrapper;
    let clients = file
        .client
        .into_iter()
        .map(|c| {
            let set = file
                .workload
                .get(&c.workload)
                .ok_or_else(|| format!("client {}: no [workload.{}]", c.id, c.workload))?;
            Ok(Client {
                id: c.id,
                tool: c.tool,
                package: c.package,
                programs: c.programs,
                modules: c.modules,
                scripts: c.scripts,
                adds: c.add,
                result: c.result,
                workload: set.flags.clone(),
                random_lengths: set.random_lengths.clone(),
                version_key: c.version_key,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok((clients, wrappers))
}

static TABLES: LazyLock<(Vec<Client>, Vec<Wrapper>)> = LazyLock::new(|| {
    // Compiled in and held to its shape by the tests below: an error here is a build's mistake.
    load_all(include_str!("clients.toml")).unwrap_or_else(|e| panic!("crates/cli/src/client/clients.toml: {e}"))
});

/// The clients `run` recognises, in `clients.toml`'s order: first match wins.
pub static CLIENTS: LazyLock<&'static [Client]> = LazyLock::new(|| &TABLES.0);

/// The wrappers `run` looks through.
pub static WRAPPERS: LazyLock<&'static [Wrapper]> = LazyLock::new(|| &TABLES.1);

#[cfg(test)]
mod tests {
    use super::*;

    fn is_flag(f: &str) -> bool {
        let name = f.strip_prefix("--").or_else(|| f.strip_prefix('-'));
        name.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    }

    #[test]
    fn every_table_is_well_formed() {
        let clients = load(include_str!("clients.toml")).unwrap();
        assert_eq!(
            clients.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
            ["vllm-bench-serve", "sglang-bench-serving", "genai-perf", "aiperf", "guidellm"]
        );
        for c in &clients {
            assert!(!c.programs.is_empty() || !c.modules.is_empty() || !c.scripts.is_empty(), "{}", c.id);
            for a in &c.adds {
                assert!(is_flag(a.flag()), "{}: {a:?}", c.id);
            }
            let result_flags: Vec<&str> = match &c.result {
                ResultAt::File { file } => vec![file],
                ResultAt::DirAndName { dir, name, .. } => vec![dir, name],
                ResultAt::Under { under, .. } => vec![under],
            };
            assert!(result_flags.iter().all(|f| is_flag(f)), "{}", c.id);
            for (flag, path) in c.workload.iter().chain(&c.random_lengths) {
                assert!(is_flag(flag), "{}: {flag}", c.id);
                assert!(
                    bench_normalize_core::vocabulary::FIELDS.iter().any(|f| f.path == path),
                    "{}: {path} is no field",
                    c.id
                );
            }
        }
        let (_, wrappers) = load_all(include_str!("clients.toml")).unwrap();
        assert!(wrappers.len() >= 10);
        for w in &wrappers {
            assert!(!w.names.is_empty());
            for f in w.values.iter().chain(&w.refuse).chain(&w.chdir) {
                assert!(is_flag(f), "{:?}: {f}", w.names);
            }
            assert!(w.chdir.iter().all(|c| w.values.contains(c)), "{:?}", w.names);
        }
    }

    #[test]
    fn a_mistyped_table_is_refused() {
        let base = "[workload.w]\nflags = []\n[[client]]\nid = 'x'\ntool = 'x'\npackage = 'x'\nworkload = 'w'\n";
        assert!(load(&format!("{base}result = {{ file = '--o' }}")).is_ok());
        assert!(load(&format!("{base}result = {{ fil = '--o' }}")).is_err());
        assert!(
            load(&format!("{base}result = {{ file = '--o' }}\nadd = [{{ kind = 'swich', flag = '--a' }}]")).is_err()
        );
        let unknown_set = base.replace("workload = 'w'", "workload = 'v'");
        assert!(load(&format!("{unknown_set}result = {{ file = '--o' }}")).is_err());
    }
}
