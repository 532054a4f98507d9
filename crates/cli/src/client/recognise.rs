//! Which client a command line runs: the program, Python module or script it names, looked up in
//! the client tables ([`CLIENTS`]), behind the wrappers agents put in front of it ([`WRAPPERS`]:
//! `timeout`, `nohup`, `stdbuf`, `nice`, `env`, `time`, `taskset`, `numactl`, `uv run`, ...) and
//! inside a shell's `-c` string when that is one simple command.

use super::table::{CLIENTS, Client, WRAPPERS, Wrapper};

pub(super) fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A Python interpreter's file name: `python`, `python3`, `python3.11`, `pypy3`.
pub(super) fn is_python(program: &str) -> bool {
    let name = file_name(program);
    let rest = name.strip_prefix("python").or_else(|| name.strip_prefix("pypy"));
    rest.is_some_and(|r| r.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
}

/// A POSIX shell's file name.
fn is_shell(program: &str) -> bool {
    matches!(file_name(program), "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash" | "mksh")
}

/// The client a command runs and where its words are.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Found {
    pub client: &'static Client,
    /// The client's command words: the command itself, or the words of the shell's `-c` string
    /// that holds it.
    pub words: Vec<String>,
    /// The client's own arguments start here in `words` (after the program and its subcommand
    /// words, the module or the script).
    pub args_at: usize,
    /// Where the program (or the Python interpreter) is in `words`.
    pub program_at: usize,
    /// The Python interpreter that runs the client, when the command names it.
    pub interpreter: Option<String>,
    /// The wrappers that decide which client runs (`env A=1`, `uv run --with x`), in order: the
    /// client's version is asked through them too.
    pub launcher: Vec<String>,
    /// The shell's `-c` string holding `words`: its index in the command.
    pub shell: Option<usize>,
    /// The directory the client runs in, relative to the working directory (`env -C DIR`).
    pub chdir: Option<String>,
}

/// Which client a command runs, looked for behind wrappers and inside a shell's `-c` string.
pub(super) fn recognise(argv: &[String]) -> Option<Found> {
    find(argv, false)
}

/// `argv`'s client; `in_shell`: `argv` are a `-c` string's words (where `NAME=value` words may
/// come first, and no further shell is looked into).
fn find(argv: &[String], in_shell: bool) -> Option<Found> {
    let mut launcher = Vec::new();
    let mut chdir = None;
    let mut at = 0;
    if in_shell {
        let assignments = argv.iter().take_while(|a| is_assignment(a)).count();
        if assignments > 0 {
            launcher.push("env".to_string());
            launcher.extend(argv[..assignments].iter().cloned());
        }
        at = assignments;
    }
    // Wrappers, one after another: `timeout 600 nohup env A=1 vllm ...`.
    while let Some(w) = argv.get(at).and_then(|p| wrapper(argv, at, p)) {
        let next = skip_wrapper(argv, at, w, &mut chdir)?;
        if w.launcher {
            launcher.extend(argv[at..next].iter().cloned());
        }
        at = next;
    }
    let program = argv.get(at)?;
    if is_shell(program) && !in_shell {
        let i = shell_string(argv, at)?;
        let words = simple_command(&argv[i])?;
        let mut found = find(&words, true)?;
        launcher.append(&mut found.launcher);
        found.launcher = launcher;
        found.shell = Some(i);
        found.chdir = found.chdir.or(chdir);
        return Some(found);
    }
    let (client, args_at, interpreter) = client_at(argv, at)?;
    Some(Found { client, words: argv.to_vec(), args_at, program_at: at, interpreter, launcher, shell: None, chdir })
}

/// `NAME=value` (a shell's or `env`'s assignment).
pub(super) fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// The wrapper `program` is (at `at` in `argv`, followed by its subcommand words).
fn wrapper(argv: &[String], at: usize, program: &str) -> Option<&'static Wrapper> {
    let name = file_name(program);
    WRAPPERS.iter().find(|w| {
        w.names.iter().any(|n| n == name)
            && argv.get(at + 1..at + 1 + w.words.len()).is_some_and(|after| after == &w.words[..])
    })
}

/// Where the command a wrapper (at `at`) runs starts; `None` when it runs none (a refused
/// option, nothing after it). A directory it runs the command in is put in `chdir`.
fn skip_wrapper(argv: &[String], at: usize, w: &Wrapper, chdir: &mut Option<String>) -> Option<usize> {
    let mut i = at + 1 + w.words.len();
    let mut operands = w.operands;
    loop {
        let a = argv.get(i)?;
        if a == "--" {
            i += 1;
            break;
        }
        if a.starts_with('-') && a.len() > 1 && operands == w.operands {
            let (name, attached) = match a.split_once('=') {
                Some((n, v)) if a.starts_with("--") => (n, Some(v.to_string())),
                _ => (a.as_str(), None),
            };
            // A short option with its value attached: `-oL`, `-k5`.
            let short = (!a.starts_with("--") && a.len() > 2)
                .then(|| w.values.iter().find(|v| v.len() == 2 && !v.starts_with("--") && a.starts_with(v.as_str())))
                .flatten();
            if w.refuse.iter().any(|r| r == name) {
                return None;
            }
            let (option, value, width) = if let Some(v) = short {
                (v.as_str(), Some(a[2..].to_string()), 1)
            } else if w.values.iter().any(|v| v == name) {
                match attached {
                    Some(v) => (name, Some(v), 1),
                    None => (name, Some(argv.get(i + 1)?.clone()), 2),
                }
            } else {
                (name, None, 1)
            };
            if w.chdir.iter().any(|c| c == option) {
                *chdir = value;
            }
            i += width;
            continue;
        }
        if w.assignments && is_assignment(a) {
            i += 1;
            continue;
        }
        if operands > 0 {
            operands -= 1;
            i += 1;
            continue;
        }
        break;
    }
    // The operands after a `--`.
    i += operands.min(argv.len().saturating_sub(i));
    (i < argv.len()).then_some(i)
}

/// The index of a shell's `-c` string (`bash -c STRING`, `bash -lc STRING`, `sh -e -c STRING`).
fn shell_string(argv: &[String], at: usize) -> Option<usize> {
    let mut i = at + 1;
    let mut command = false;
    while let Some(a) = argv.get(i) {
        if a == "--" {
            i += 1;
            break;
        }
        if matches!(a.as_str(), "-o" | "+o" | "--rcfile" | "--init-file") {
            i += 2;
            continue;
        }
        if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 {
            command |= !a.starts_with("--") && a[1..].contains('c');
            i += 1;
            continue;
        }
        break;
    }
    (command && i < argv.len()).then_some(i)
}

/// A shell's `-c` string as words, when it is one simple command whose words the shell takes
/// literally: split as a POSIX shell splits words (quotes, escapes), and none holding what a
/// shell would expand or treat as syntax (`$`, `` ` ``, `;`, `&`, `|`, `<`, `>`, `(`, `)`, a
/// glob, a brace list, a leading `~`, a newline), quoted or not: such a command's words cannot be
/// known without running a shell, so its flags cannot be added or read. Such a string is not
/// looked into (the command runs as given, and `run` says the client was not recognised).
pub(super) fn simple_command(text: &str) -> Option<Vec<String>> {
    // A line break separates commands, and the splitter takes it for a space.
    if text.contains(['\n', '\r']) {
        return None;
    }
    let words = shlex::split(text)?;
    let literal = |w: &String| {
        !w.contains(['$', '`', ';', '&', '|', '<', '>', '(', ')', '*', '?', '[', ']', '\n', '\r', '!'])
            && !w.starts_with('~')
            && !(w.contains('{') && (w.contains(',') || w.contains("..")))
    };
    (!words.is_empty() && words.iter().all(literal)).then_some(words)
}

/// The client run by the program at `at`, the index of its own arguments, and the Python
/// interpreter named.
fn client_at(argv: &[String], at: usize) -> Option<(&'static Client, usize, Option<String>)> {
    let program = argv.get(at)?;
    if is_python(program) {
        // Interpreter options, then `-m module` or a script.
        let mut i = at + 1;
        while let Some(a) = argv.get(i) {
            if a == "-m" || (a.starts_with("-m") && a.len() > 2 && !a.starts_with("--")) {
                let (module, next) = if a == "-m" { (argv.get(i + 1)?.as_str(), i + 2) } else { (&a[2..], i + 1) };
                let client = CLIENTS.iter().find(|c| c.modules.iter().any(|m| m == module))?;
                return Some((client, next, Some(program.clone())));
            }
            if matches!(a.as_str(), "-X" | "-W" | "--check-hash-based-pycs") {
                i += 2;
            } else if a.starts_with('-') && a != "-" {
                if a == "-c" {
                    return None;
                }
                i += 1;
            } else {
                if let Some(client) =
                    CLIENTS.iter().find(|c| c.scripts.iter().any(|s| a == s || a.ends_with(&format!("/{s}"))))
                {
                    return Some((client, i + 1, Some(program.clone())));
                }
                // A console script run by an interpreter: `python3 /opt/venv/bin/vllm bench serve`.
                return program_client(argv, i).map(|(c, next)| (c, next, Some(program.clone())));
            }
        }
        return None;
    }
    program_client(argv, at).map(|(c, next)| (c, next, None))
}

/// The client whose program (by file name) and subcommand words are at `at`.
fn program_client(argv: &[String], at: usize) -> Option<(&'static Client, usize)> {
    let name = file_name(argv.get(at)?);
    CLIENTS.iter().find_map(|c| {
        c.programs.iter().find_map(|p| {
            let after = &argv[at + 1..];
            (p.name == name && after.len() >= p.words.len() && after.iter().zip(&p.words).all(|(a, w)| a == w))
                .then_some((c, at + 1 + p.words.len()))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        shlex::split(s).unwrap()
    }

    fn id(cmd: &str) -> Option<String> {
        recognise(&words(cmd)).map(|f| f.client.id.clone())
    }

    #[test]
    fn the_client_is_found_behind_wrappers() {
        for (cmd, program) in [
            ("timeout 600 vllm bench serve --model m", "vllm"),
            ("timeout -k 10 -s INT 1h vllm bench serve", "vllm"),
            ("timeout --kill-after=10 600 vllm bench serve", "vllm"),
            ("nohup vllm bench serve", "vllm"),
            ("stdbuf -oL -eL vllm bench serve", "vllm"),
            ("stdbuf -o L vllm bench serve", "vllm"),
            ("nice -n 10 vllm bench serve", "vllm"),
            ("nice vllm bench serve", "vllm"),
            ("env -u HOME A=1 B=2 vllm bench serve", "vllm"),
            ("env --unset=HOME -i vllm bench serve", "vllm"),
            ("/usr/bin/time -v -o t.txt vllm bench serve", "vllm"),
            ("time -p vllm bench serve", "vllm"),
            ("taskset -c 0-7 vllm bench serve", "vllm"),
            ("taskset 0xff vllm bench serve", "vllm"),
            ("numactl --cpunodebind=0 --membind 0 vllm bench serve", "vllm"),
            ("numactl -N 0 -l vllm bench serve", "vllm"),
            ("uv run --with vllm vllm bench serve", "vllm"),
            ("uv run python -m sglang.bench_serving --backend sglang", "python"),
            ("timeout 600 nohup stdbuf -oL env A=1 python3 -u -m sglang.bench_serving", "python3"),
            ("python3 /opt/venv/bin/vllm bench serve --model m", "python3"),
            ("nohup -- timeout -- 5 vllm bench serve", "vllm"),
        ] {
            let f = recognise(&words(cmd)).unwrap_or_else(|| panic!("{cmd}"));
            assert_eq!(file_name(&f.words[f.program_at]), program, "{cmd}");
            assert!(f.words[f.args_at - 1] == "serve" || f.words[f.args_at - 1] == "sglang.bench_serving", "{cmd}");
            assert_eq!(f.shell, None);
        }
        let f = recognise(&words("env -C /work A=1 uv run --with x vllm bench serve")).unwrap();
        assert_eq!(f.chdir.as_deref(), Some("/work"));
        assert_eq!(f.launcher, words("env -C /work A=1 uv run --with x"));
        let f = recognise(&words("timeout 5 python3 -m sglang.bench_serving")).unwrap();
        assert_eq!(f.launcher, Vec::<String>::new());
        assert_eq!(f.interpreter.as_deref(), Some("python3"));
    }

    #[test]
    fn what_runs_no_client_is_not_one() {
        for cmd in [
            "timeout 600",
            "timeout vllm bench serve",
            "taskset -p 1234",
            "env -S 'vllm bench serve'",
            "nohup",
            "numactl --hardware",
            "uv run -m sglang.bench_serving",
            "time vllm serve m",
            "python3 /opt/venv/bin/vllm serve m",
            "sudo vllm bench serve",
        ] {
            assert_eq!(id(cmd), None, "{cmd}");
        }
    }

    #[test]
    fn a_shells_simple_command_is_looked_into() {
        let f = recognise(&words("bash -c 'exec vllm bench serve --model m --header \"A: b\"'")).unwrap();
        assert_eq!(f.shell, Some(2));
        assert_eq!(f.words, words("exec vllm bench serve --model m --header 'A: b'"));
        assert_eq!(f.args_at, 4);
        for cmd in [
            "sh -c 'vllm bench serve'",
            "bash -lc 'timeout 60 vllm bench serve'",
            "bash -e -c 'HF_HOME=/x vllm bench serve' name",
            "timeout 700 bash -c 'nohup python3 -m sglang.bench_serving --backend sglang'",
        ] {
            assert!(recognise(&words(cmd)).is_some_and(|f| f.shell.is_some()), "{cmd}");
        }
        let f = recognise(&words("env A=1 bash -c 'B=2 uv run vllm bench serve'")).unwrap();
        assert_eq!(f.launcher, words("env A=1 env B=2 uv run"));
        // Not one simple command, or not literal words: not looked into.
        for cmd in [
            "bash -c 'vllm serve m & vllm bench serve'",
            "bash -c 'vllm bench serve; echo done'",
            "bash -c 'vllm bench serve --model $MODEL'",
            "bash -c 'vllm bench serve > out.log'",
            "bash -c 'vllm bench serve | tee x'",
            "bash -c 'vllm bench serve --model `cat m`'",
            "bash -c 'cd /x && vllm bench serve'",
            "bash -c 'vllm bench serve\necho'",
            "bash -c 'bash -c \"vllm bench serve\"'",
            "bash -c 'vllm bench serve --x {a,b}'",
            "bash script.sh",
            "bash -c 'vllm bench serve \"unterminated'",
        ] {
            assert_eq!(id(cmd), None, "{cmd}");
        }
    }
}
