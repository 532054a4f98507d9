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

/// `clients.toml` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClientsFile {
    workload: HashMap<String, WorkloadSet>,
    client: Vec<ClientTable>,
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
}

/// The client tables, read from their TOML text.
fn load(text: &str) -> Result<Vec<Client>, String> {
    let file: ClientsFile = toml::from_str(text).map_err(|e| e.to_string())?;
    file.client
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
            })
        })
        .collect()
}

/// The clients `run` recognises, in `clients.toml`'s order: first match wins.
pub static CLIENTS: LazyLock<Vec<Client>> = LazyLock::new(|| {
    // Compiled in and held to its shape by the tests below: an error here is a build's mistake.
    load(include_str!("clients.toml")).unwrap_or_else(|e| panic!("src/client/clients.toml: {e}"))
});

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
                assert!(crate::vocabulary::FIELDS.iter().any(|f| f.path == path), "{}: {path} is no field", c.id);
            }
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
