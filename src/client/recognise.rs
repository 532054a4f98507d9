//! Which client a command line runs: the program, Python module or script it names, looked up in
//! the client tables ([`CLIENTS`]).

use super::table::{CLIENTS, Client};

pub(super) fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A Python interpreter's file name: `python`, `python3`, `python3.11`, `pypy3`.
pub(super) fn is_python(program: &str) -> bool {
    let name = file_name(program);
    let rest = name.strip_prefix("python").or_else(|| name.strip_prefix("pypy"));
    rest.is_some_and(|r| r.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
}

/// Which client a command runs, the index of its own arguments, and the Python interpreter
/// named in it. A leading `env NAME=value ...` is looked through.
pub(super) fn recognise(argv: &[String]) -> Option<(&'static Client, usize, Option<String>)> {
    let mut at = 0;
    if argv.first().is_some_and(|a| file_name(a) == "env") {
        at = 1;
        while argv.get(at).is_some_and(|a| a.contains('=') && !a.starts_with('-')) {
            at += 1;
        }
    }
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
                let client =
                    CLIENTS.iter().find(|c| c.scripts.iter().any(|s| a == s || a.ends_with(&format!("/{s}"))))?;
                return Some((client, i + 1, Some(program.clone())));
            }
        }
        return None;
    }
    let name = file_name(program);
    CLIENTS.iter().find_map(|c| {
        c.programs.iter().find_map(|p| {
            let after = &argv[at + 1..];
            (p.name == name && after.len() >= p.words.len() && after.iter().zip(&p.words).all(|(a, w)| a == w))
                .then_some((c, at + 1 + p.words.len(), None))
        })
    })
}
