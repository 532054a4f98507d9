//! Credentials out of every command `run` records: the one redaction ([`redact_words`],
//! [`redact_text`]) that the recorded command (`source.run.given`, `command`, `added_flags`,
//! `workload.command`, dstack's `command`) and the diagnostics about the client go through.
//!
//! What is a credential, as far as a command line can tell:
//! * the value of a flag or variable whose name says so: its last part (split at `-`, `_`, `.`)
//!   is `key`, `apikey`, `token`, `secret`, `password`, `passwd`, `pwd`, `credential(s)` or
//!   `cookie`, or it names `secret`, `password` or `api-key` anywhere (`--api-key X`,
//!   `--hf-token=X`, `OPENAI_API_KEY=X`, `"api_key": "X"`); `--max-tokens` and `--tokenizer` are not;
//! * a header's value whose name says so, or `Authorization`/`Cookie` (`--header 'Authorization:
//!   Bearer X'`, `-H 'X-Api-Key: X'`, vLLM's `--header Authorization=X`);
//! * the word after `Bearer`, and the shapes of common keys anywhere (`sk-...`, `hf_...`,
//!   `ghp_...`, `github_pat_...`, `xoxb-...`, `AKIA...`).
//!
//! Each is replaced by [`MASK`], which dstack's model accepts in a command (it refuses a bearer
//! token value).

use std::sync::LazyLock;

use regex::{Captures, Regex};

/// What a credential is replaced with.
pub const MASK: &str = "REDACTED";

/// Whether a flag's, variable's, key's or header's name says its value is a credential.
pub(super) fn secret_name(name: &str) -> bool {
    let n = name.trim_start_matches('-').to_ascii_lowercase().replace('_', "-");
    if n.is_empty() {
        return false;
    }
    let last = n.rsplit(['-', '.']).next().unwrap_or(&n);
    matches!(
        last,
        "key"
            | "apikey"
            | "token"
            | "accesstoken"
            | "secret"
            | "password"
            | "passwd"
            | "pwd"
            | "credential"
            | "credentials"
            | "cookie"
            | "authorization"
    ) || n.contains("secret")
        || n.contains("password")
        || n.contains("api-key")
        || n.contains("apikey")
}

/// Whether a flag takes a header (`--header`, `-H`, `--extra-header`, `--headers`).
fn header_flag(flag: &str) -> bool {
    flag == "-H" || (flag.starts_with("--") && flag.to_ascii_lowercase().contains("header"))
}

/// A header (`Name: value` or `Name=value`) with its value masked when its name says it is a
/// credential.
fn redact_header(h: &str) -> String {
    let Some(at) = h.find([':', '=']) else { return h.to_string() };
    let name = h[..at].trim().trim_matches(['"', '\'']);
    if secret_name(name) {
        let sep_end = at + 1 + (h[at + 1..].len() - h[at + 1..].trim_start().len());
        format!("{}{MASK}", &h[..sep_end])
    } else {
        h.to_string()
    }
}

/// A command's words with every credential masked: a secret flag's value (`--api-key X`,
/// `--api-key=X`), a header's (`--header 'Authorization: Bearer X'`), a variable's
/// (`HF_TOKEN=X`), and whatever [`redact_text`] finds inside any word (a shell's `-c` string, a
/// JSON body).
pub fn redact_words(words: &[String]) -> Vec<String> {
    enum Next {
        Plain,
        Secret,
        Header,
    }
    let mut next = Next::Plain;
    let mut out = Vec::with_capacity(words.len());
    for w in words {
        let word = match std::mem::replace(&mut next, Next::Plain) {
            Next::Secret if !w.starts_with("--") => MASK.to_string(),
            Next::Header => redact_header(w),
            _ if w.starts_with('-') && w != "-" && w != "--" => match w.split_once('=') {
                Some((flag, _)) if flag.starts_with("--") && secret_name(flag) => format!("{flag}={MASK}"),
                Some((flag, value)) if header_flag(flag) => format!("{flag}={}", redact_header(value)),
                _ if w.starts_with("-H") && w.len() > 2 && !w.starts_with("--") => {
                    format!("-H{}", redact_header(&w[2..]))
                }
                Some(_) => w.clone(),
                None => {
                    if header_flag(w) {
                        next = Next::Header;
                    } else if w.starts_with("--") && secret_name(w) {
                        next = Next::Secret;
                    }
                    w.clone()
                }
            },
            _ => w.clone(),
        };
        out.push(redact_text(&word));
    }
    out
}

/// `Authorization: <scheme> X`, `Bearer X`.
static AUTH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)\b(?:(authorization["']?\s*[:=]\s*["']?)(?:(bearer|basic|digest|token)\s+)?|(bearer)\s+)([^\s"',;]+)"#,
    )
    .expect("a valid pattern")
});

/// `NAME=X`, `"name": "X"`, `--name=X`: the name decides.
static NAMED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(-{0,2}[A-Za-z_][A-Za-z0-9_.-]*)(["']?\s*[:=]\s*["']?)([^\s"',;&|}]+)"#).expect("a valid pattern")
});

/// A flag in a text (`--api-key X` inside a shell's `-c` string): the flag decides its value.
static FLAG: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"--?[A-Za-z][A-Za-z0-9_-]*").expect("a valid pattern"));

/// The values of secret flags followed by a space in `text` (`--api-key X`), masked.
fn mask_spaced_flags(text: &str) -> String {
    let mut masked = Vec::new();
    for m in FLAG.find_iter(text) {
        let at_word_start =
            text[..m.start()].chars().next_back().is_none_or(|c| c.is_whitespace() || c == '"' || c == '\'');
        if !at_word_start || !secret_name(m.as_str()) {
            continue;
        }
        let rest = &text[m.end()..];
        let gap = rest.len() - rest.trim_start().len();
        if gap == 0 {
            continue;
        }
        let quote = rest[gap..].starts_with(['"', '\'']) as usize;
        let start = m.end() + gap + quote;
        let len =
            text[start..].find(|c: char| c.is_whitespace() || c == '"' || c == '\'').unwrap_or(text.len() - start);
        let value = &text[start..start + len];
        if len > 0 && !value.starts_with('$') && !value.starts_with('-') {
            masked.push(start..start + len);
        }
    }
    let mut out = text.to_string();
    for r in masked.into_iter().rev() {
        out.replace_range(r, MASK);
    }
    out
}

/// Common keys by their shape.
static SHAPED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b(?:sk-[A-Za-z0-9_-]{16,}|hf_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})",
    )
    .expect("a valid pattern")
});

/// A text (one word, a shell's `-c` string, a command line, a message about the command) with
/// every credential it shows masked.
pub fn redact_text(text: &str) -> String {
    let once = AUTH.replace_all(text, |c: &Captures| {
        let lead = c.get(1).map_or("", |m| m.as_str());
        let scheme = c.get(2).or(c.get(3)).map(|m| format!("{} ", m.as_str())).unwrap_or_default();
        format!("{lead}{scheme}{MASK}")
    });
    let twice = NAMED.replace_all(&once, |c: &Captures| {
        let (name, sep, value) = (&c[1], &c[2], &c[3]);
        if secret_name(name) && !name.eq_ignore_ascii_case("authorization") && !value.starts_with('$') {
            format!("{name}{sep}{MASK}")
        } else {
            c[0].to_string()
        }
    });
    let thrice = mask_spaced_flags(&twice);
    SHAPED.replace_all(&thrice, MASK).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn w(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn names_that_say_credential() {
        for n in
            ["--api-key", "--hf-token", "--hf_token", "OPENAI_API_KEY", "HF_TOKEN", "api_key", "X-Api-Key", "--key"]
        {
            assert!(secret_name(n), "{n}");
        }
        for n in ["--max-tokens", "--tokenizer", "--tokenizer-mode", "--random-output-len", "--ssl-keyfile", "--model"]
        {
            assert!(!secret_name(n), "{n}");
        }
    }

    #[test]
    fn each_form_is_masked_and_the_rest_kept() {
        let got = redact_words(&w(&[
            "env",
            "HF_TOKEN=hf_abc",
            "vllm",
            "bench",
            "serve",
            "--api-key",
            "k123",
            "--header",
            "Authorization: Bearer t456",
            "--model",
            "m",
            "--max-tokens",
            "512",
            "--hf-token=x789",
        ]));
        assert_eq!(
            got,
            w(&[
                "env",
                "HF_TOKEN=REDACTED",
                "vllm",
                "bench",
                "serve",
                "--api-key",
                "REDACTED",
                "--header",
                "Authorization: REDACTED",
                "--model",
                "m",
                "--max-tokens",
                "512",
                "--hf-token=REDACTED",
            ])
        );
        assert_eq!(
            redact_text("bash -c 'vllm bench serve --api-key k1 --model m'"),
            "bash -c 'vllm bench serve --api-key REDACTED --model m'"
        );
        // A variable's name is no credential, and is kept.
        assert_eq!(redact_text("--api-key $KEY"), "--api-key $KEY");
    }

    /// A secret, in any of the forms a command carries one, among other arguments.
    fn forms(s: &str) -> Vec<Vec<String>> {
        let f = |v: &[&str]| v.iter().map(|x| x.replace('§', s)).collect::<Vec<_>>();
        vec![
            f(&["--api-key", "§"]),
            f(&["--api-key=§"]),
            f(&["--openai_api_key", "§"]),
            f(&["--hf-token", "§"]),
            f(&["--hf_token=§"]),
            f(&["--header", "Authorization: Bearer §"]),
            f(&["--header", "authorization:Bearer §"]),
            f(&["-H", "Authorization: Bearer §"]),
            f(&["-HAuthorization: Bearer §"]),
            f(&["--header=Authorization: Bearer §"]),
            f(&["--header", "Authorization=Bearer §"]),
            f(&["--header", "Authorization=§"]),
            f(&["--header", "X-Api-Key: §"]),
            f(&["--extra-header", "Proxy-Authorization: Basic §"]),
            f(&["OPENAI_API_KEY=§"]),
            f(&["HF_TOKEN=§"]),
            f(&["HUGGING_FACE_HUB_TOKEN=§"]),
            f(&["AWS_SECRET_ACCESS_KEY=§"]),
            f(&["--extra-body", "{\"api_key\": \"§\", \"temperature\": 0}"]),
            f(&["-c", "vllm bench serve --api-key § --model m"]),
            f(&["-c", "HF_TOKEN=§ vllm bench serve"]),
            f(&["-c", "vllm bench serve --header 'Authorization: Bearer §'"]),
            f(&["--password", "§"]),
            f(&["--db-password=§"]),
            f(&["sk-§"]),
            f(&["--x", "hf_§"]),
            f(&["--header", "Cookie: session=§"]),
            f(&["-c", "env OPENAI_API_KEY=§ timeout 60 vllm bench serve"]),
        ]
    }

    proptest! {
        /// Whatever the form, the secret appears in no recorded word and no recorded line.
        #[test]
        fn a_secret_in_any_form_is_never_recorded(
            secret in "[A-Za-z0-9]{8,30}[0-9][A-Za-z0-9]{8,30}",
            form in 0usize..28,
            before in proptest::collection::vec("--[a-z]{2,8}|[a-z0-9/.]{1,8}", 0..4),
            after in proptest::collection::vec("--[a-z]{2,8}|[a-z0-9/.]{1,8}", 0..4),
        ) {
            let mut words: Vec<String> = ["vllm", "bench", "serve"].iter().map(|s| s.to_string()).collect();
            words.extend(before);
            words.extend(forms(&secret)[form].clone());
            words.extend(after);
            prop_assert!(words.iter().any(|w| w.contains(&secret)));
            let red = redact_words(&words);
            for word in &red {
                prop_assert!(!word.contains(&secret), "{word:?} from {words:?}");
            }
            let line = crate::client::shell_join(&red);
            prop_assert!(!line.contains(&secret), "{line}");
            // Redacting a recorded line again changes nothing, and finds nothing more.
            prop_assert!(!redact_text(&crate::client::shell_join(&words)).contains(&secret), "{words:?}");
            prop_assert_eq!(redact_text(&line), line.clone());
            prop_assert!(bench_normalize_core::dstack::model::bearer_token(&line).is_none(), "{}", line);
            prop_assert_eq!(red.len(), words.len());
        }

        /// Arguments that hold no credential pass unchanged.
        #[test]
        fn plain_arguments_pass_unchanged(
            args in proptest::collection::vec("--(model|max-tokens|num-prompts|tokenizer|backend)|[a-z0-9/.,]{1,12}", 0..10),
        ) {
            let mut words: Vec<String> = ["vllm", "bench", "serve"].iter().map(|s| s.to_string()).collect();
            words.extend(args);
            prop_assert_eq!(redact_words(&words), words);
        }
    }
}
