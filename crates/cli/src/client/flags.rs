//! The command as it will run ([`Plan`]): the flags a client's table says to add, added where the
//! user did not set them (the user's own always win), and where the result file will be.

use std::path::Path;

use super::recognise::{is_assignment, recognise};
use super::result_file::Expected;
use super::table::{Add, Client, ResultAt};

/// The command as it will run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub client: Option<&'static Client>,
    /// The command as given.
    pub given: Vec<String>,
    /// The command as run.
    pub command: Vec<String>,
    /// What was added or changed, each flag with its value.
    pub added: Vec<String>,
    /// The client's command words as run: `command`, or the words of the shell's `-c` string
    /// that holds the client (re-quoted into `command`).
    pub words: Vec<String>,
    /// The client's arguments in `words` start here (after the program and its subcommand
    /// words, the module or the script).
    pub args_at: usize,
    /// The program (or Python interpreter) in `words`.
    pub program_at: usize,
    /// The Python interpreter that runs the client, when the command names it.
    pub interpreter: Option<String>,
    /// The wrappers that decide which client runs (`env A=1`, `uv run ...`): its version is
    /// asked through them.
    pub launcher: Vec<String>,
    /// The directory the client runs in, relative to the working directory (`env -C DIR`).
    pub chdir: Option<String>,
}

/// A flag name as argparse matches it: `--percentile_metrics` is `--percentile-metrics`.
fn same_flag(arg: &str, flag: &str) -> bool {
    let name = arg.split_once('=').map_or(arg, |(n, _)| n);
    name.len() == flag.len() && name.bytes().zip(flag.bytes()).all(|(a, b)| a == b || (a == b'_' && b == b'-'))
}

/// Where a flag is among `args` (up to a literal `--`, after which arguments are passed on) and
/// its value: `--flag=value` or `--flag value`.
pub(super) fn find_flag<'a>(args: &'a [String], flag: &str) -> Option<(usize, Option<&'a str>)> {
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let i = args[..end].iter().position(|a| same_flag(a, flag))?;
    let value = match args[i].split_once('=') {
        Some((_, v)) if args[i].starts_with("--") => Some(v),
        _ => args.get(i + 1).filter(|v| i + 1 < end && !v.starts_with("--")).map(String::as_str),
    };
    Some((i, value))
}

/// The command as it will run: the client recognised and the flags it lacks added (before a
/// literal `--` among its arguments, which passes the rest on), pointing into `private`.
pub fn plan(given: &[String], private: &Path) -> Plan {
    let Some(found) = recognise(given) else { return plan_unrecognised(given) };
    let (client, args_at) = (found.client, found.args_at);
    let mut command = found.words.clone();
    let mut added = Vec::new();
    let mut extra: Vec<String> = Vec::new();
    for add in &client.adds {
        let args = &command[args_at..];
        let set = |f: &str| find_flag(args, f).is_some();
        match add {
            Add::Switch { flag } => {
                if !set(flag) {
                    extra.push(flag.to_string());
                    added.push(flag.to_string());
                }
            }
            Add::List { flag, default, need } => match find_flag(args, flag).map(|(i, v)| (i, v.map(String::from))) {
                None => {
                    extra.extend([flag.to_string(), default.to_string()]);
                    added.push(format!("{flag} {default}"));
                }
                Some((i, Some(list))) if !list.split(',').any(|m| m.trim() == need) => {
                    let list = list.as_str();
                    let merged = if list.trim().is_empty() { need.to_string() } else { format!("{list},{need}") };
                    let i = args_at + i;
                    if command[i].contains('=') {
                        command[i] = format!("{}={merged}", command[i].split_once('=').map_or("", |(n, _)| n));
                    } else {
                        command[i + 1] = merged.clone();
                    }
                    added.push(format!("{flag} {merged} (was {list})"));
                }
                Some(_) => {}
            },
            Add::Private { flag, name, unless } => {
                if !set(flag) && !unless.iter().any(|u| set(u)) {
                    let path = if name.is_empty() { private.to_path_buf() } else { private.join(name) };
                    let path = path.display().to_string();
                    added.push(format!("{flag} {path}"));
                    extra.extend([flag.to_string(), path]);
                }
            }
            Add::Value { flag, value, unless } => {
                if !set(flag) && !unless.iter().any(|u| set(u)) {
                    added.push(format!("{flag} {value}"));
                    extra.extend([flag.to_string(), value.to_string()]);
                }
            }
        }
    }
    let insert_at = command[args_at..].iter().position(|a| a == "--").map_or(command.len(), |p| args_at + p);
    command.splice(insert_at..insert_at, extra);
    let words = command;
    let command = match found.shell {
        None => words.clone(),
        Some(i) => {
            // Back into the `-c` string, each word quoted as the shell reads it back (the words
            // are literal: `recognise::simple_command`); a leading `NAME=value` keeps its name
            // unquoted, or it would be no assignment.
            let lead = words.iter().take_while(|w| is_assignment(w)).count();
            let line: Vec<String> = words
                .iter()
                .enumerate()
                .map(|(i, w)| match w.split_once('=') {
                    Some((name, value)) if i < lead => format!("{name}={}", shell_quote(value)),
                    _ => shell_quote(w),
                })
                .collect();
            let mut outer = given.to_vec();
            outer[i] = line.join(" ");
            outer
        }
    };
    Plan {
        client: Some(client),
        given: given.to_vec(),
        command,
        added,
        words,
        args_at,
        program_at: found.program_at,
        interpreter: found.interpreter,
        launcher: found.launcher,
        chdir: found.chdir,
    }
}

fn plan_unrecognised(given: &[String]) -> Plan {
    Plan {
        client: None,
        given: given.to_vec(),
        command: given.to_vec(),
        added: Vec::new(),
        words: given.to_vec(),
        args_at: given.len(),
        program_at: 0,
        interpreter: None,
        launcher: Vec::new(),
        chdir: None,
    }
}

impl Plan {
    /// The value of a flag among the client's arguments, as run.
    pub fn flag(&self, flag: &str) -> Option<&str> {
        find_flag(&self.words[self.args_at.min(self.words.len())..], flag).and_then(|(_, v)| v)
    }

    /// Where the result file will be, as far as the command says.
    pub(super) fn expected(&self, cwd: &Path) -> Option<Expected> {
        let client = self.client?;
        let cwd = &match &self.chdir {
            Some(d) => cwd.join(d),
            None => cwd.to_path_buf(),
        };
        let path = |p: &str| cwd.join(p);
        Some(match &client.result {
            ResultAt::File { file } => Expected::File(path(self.flag(file)?)),
            ResultAt::DirAndName { dir, name, ext } => match (self.flag(dir), self.flag(name)) {
                (Some(d), Some(n)) => Expected::File(path(d).join(n)),
                (None, Some(n)) => Expected::File(path(n)),
                (Some(d), None) => Expected::Newest { dir: path(d), ext, deep: false, names: &[] },
                (None, None) => return None,
            },
            ResultAt::Under { under, names } => {
                Expected::Newest { dir: path(self.flag(under)?), ext: "", deep: true, names }
            }
        })
    }
}

/// Words joined as a POSIX shell reads them back.
pub fn shell_join(words: &[String]) -> String {
    words.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" ")
}

/// A word as a POSIX shell reads it back: as it is when it holds nothing the shell treats
/// specially, else in single quotes.
pub fn shell_quote(w: &str) -> String {
    let plain = !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%^".contains(&b));
    if plain { w.to_string() } else { format!("'{}'", w.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::recognise::is_python;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn vllm_gets_what_exact_figures_need() {
        let p = plan(&words("vllm bench serve --model m --num-prompts 16"), Path::new("/tmp/x"));
        assert_eq!(p.client.map(|c| c.id.as_str()), Some("vllm-bench-serve"));
        assert_eq!(
            p.command,
            words(
                "vllm bench serve --model m --num-prompts 16 --percentile-metrics ttft,tpot,itl,e2el --save-result \
                 --save-detailed --result-dir /tmp/x --result-filename vllm.result.json"
            )
        );
        assert_eq!(p.added.len(), 5);
    }

    #[test]
    fn the_users_flags_win_and_lists_are_merged() {
        let p = plan(
            &words("vllm bench serve --percentile-metrics ttft,tpot --save-result --result-dir out"),
            Path::new("/tmp/x"),
        );
        assert_eq!(
            p.command,
            words(
                "vllm bench serve --percentile-metrics ttft,tpot,e2el --save-result --result-dir out --save-detailed"
            )
        );
        assert_eq!(p.added, ["--percentile-metrics ttft,tpot,e2el (was ttft,tpot)", "--save-detailed"]);
        // `=` forms and underscores are the user's flags too.
        let p = plan(&words("vllm bench serve --percentile_metrics=e2el --result-filename r.json"), Path::new("/t"));
        assert_eq!(
            p.command,
            words("vllm bench serve --percentile_metrics=e2el --result-filename r.json --save-result --save-detailed")
        );
        let p = plan(&words("vllm bench serve --percentile-metrics=ttft"), Path::new("/t"));
        assert_eq!(p.command[3], "--percentile-metrics=ttft,e2el");
    }

    #[test]
    fn sglang_is_recognised_under_any_python() {
        for cmd in [
            "python -m sglang.bench_serving --backend sglang",
            "python3 -m sglang.bench_serving --backend sglang",
            "/opt/venv/bin/python3.11 -u -m sglang.bench_serving --backend sglang",
            "env A=1 python3 -msglang.bench_serving --backend sglang",
        ] {
            let p = plan(&words(cmd), Path::new("/t"));
            assert_eq!(p.client.map(|c| c.id.as_str()), Some("sglang-bench-serving"), "{cmd}");
            assert_eq!(p.added, ["--output-file /t/sglang.result.jsonl", "--output-details"], "{cmd}");
            assert!(p.interpreter.as_deref().is_some_and(is_python), "{cmd}");
        }
        let p =
            plan(&words("python -m sglang.bench_serving --output-file mine.jsonl --output-details"), Path::new("/t"));
        assert!(p.added.is_empty());
        assert_eq!(p.command, p.given);
    }

    #[test]
    fn scripts_and_peers_are_recognised_and_others_run_as_given() {
        let p = plan(&words("python benchmarks/benchmark_serving.py --model m"), Path::new("/t"));
        assert_eq!(p.client.map(|c| c.id.as_str()), Some("vllm-bench-serve"));
        let p = plan(&words("genai-perf profile -m x -- --extra"), Path::new("/t"));
        assert_eq!(p.command, words("genai-perf profile -m x --artifact-dir /t/artifacts -- --extra"));
        for cmd in ["vllm serve model", "python -c pass", "ls -l", "python -m other.module"] {
            let p = plan(&words(cmd), Path::new("/t"));
            assert!(p.client.is_none() && p.command == p.given, "{cmd}");
        }
    }

    #[test]
    fn shell_join_quotes_what_a_shell_would_split() {
        let w = vec!["a b".to_string(), "it's".into(), "--x=1".into(), String::new()];
        assert_eq!(shell_join(&w), r"'a b' 'it'\''s' --x=1 ''");
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Wrapper prefixes, each as the words it adds.
    fn wrapper() -> impl Strategy<Value = Vec<String>> {
        prop_oneof![
            Just(vec!["timeout".to_string(), "600".into()]),
            Just(vec!["timeout".to_string(), "-s".into(), "INT".into(), "1h".into()]),
            Just(vec!["nohup".to_string()]),
            Just(vec!["stdbuf".to_string(), "-oL".into()]),
            Just(vec!["nice".to_string(), "-n".into(), "5".into()]),
            Just(vec!["env".to_string(), "-u".into(), "X".into(), "A=1".into()]),
            Just(vec!["time".to_string(), "-p".into()]),
            Just(vec!["taskset".to_string(), "-c".into(), "0-3".into()]),
            Just(vec!["numactl".to_string(), "--cpunodebind=0".into(), "-m".into(), "0".into()]),
            Just(vec!["uv".to_string(), "run".into(), "--with".into(), "vllm".into()]),
        ]
    }

    proptest! {
        /// Behind any chain of wrappers, directly or inside a shell's `-c` string: the client is
        /// found, the user's words are kept in order, the flags are added after the client's own
        /// arguments, and a `-c` string splits back into the words planned.
        #[test]
        fn flags_land_where_the_client_reads_them(
            chain in proptest::collection::vec(wrapper(), 0..4),
            in_shell in any::<bool>(),
            model in "[a-z0-9/]{1,12}",
        ) {
            let mut words: Vec<String> = chain.concat();
            words.extend(["vllm", "bench", "serve", "--model"].map(String::from));
            words.push(model.clone());
            let given = if in_shell {
                vec!["bash".to_string(), "-c".into(), shell_join(&words)]
            } else {
                words.clone()
            };
            let p = plan(&given, Path::new("/t/run dir"));
            prop_assert_eq!(p.client.map(|c| c.id.as_str()), Some("vllm-bench-serve"));
            prop_assert_eq!(&p.words[..words.len()], &words[..]);
            prop_assert_eq!(&p.words[p.args_at - 1], "serve");
            prop_assert_eq!(p.flag("--model"), Some(model.as_str()));
            prop_assert_eq!(p.flag("--result-dir"), Some("/t/run dir"));
            if in_shell {
                prop_assert_eq!(&p.command[..2], &given[..2]);
                prop_assert_eq!(shlex::split(&p.command[2]), Some(p.words.clone()));
            } else {
                prop_assert_eq!(&p.command, &p.words);
            }
        }
    }
}
