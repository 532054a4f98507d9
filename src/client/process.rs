//! Running the client: a process group of its own, its output copied live and to a log line by
//! line, signals passed on; and asking its version from the Python that runs it.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::flags::Plan;
use super::recognise::{file_name, is_python};
use super::table::Client;

/// How the client ended.
#[derive(Debug)]
pub(super) struct Ended {
    pub(super) status: ExitStatus,
    pub(super) started: SystemTime,
    pub(super) ended: SystemTime,
    pub(super) forwarded: Vec<i32>,
}

/// Where the client's output goes: the live copy (stderr) and the log that is read afterwards.
struct Outputs {
    live: Box<dyn Write + Send>,
    log: File,
    log_failed: Option<io::Error>,
    /// The last byte shown: what comes after the client's output starts on a line of its own.
    last: Option<u8>,
}

impl Outputs {
    fn write(&mut self, bytes: &[u8]) {
        self.last = bytes.last().copied().or(self.last);
        // A closed stderr does not stop the benchmark; a log that cannot be written is said at the end.
        let _ = self.live.write_all(bytes).and_then(|_| self.live.flush());
        if self.log_failed.is_none() {
            if let Err(e) = self.log.write_all(bytes) {
                self.log_failed = Some(e);
            }
        }
    }
}

/// Copy a pipe to `out`, whole lines at a time (`\n` or tqdm's `\r`) as they come, so that the
/// client's stdout and stderr do not cut into each other's lines.
fn pump(mut from: impl Read, out: &Mutex<Outputs>) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        pending.extend_from_slice(&buf[..n]);
        if let Some(end) = pending.iter().rposition(|b| *b == b'\n' || *b == b'\r') {
            let lines: Vec<u8> = pending.drain(..=end).collect();
            out.lock().unwrap_or_else(|p| p.into_inner()).write(&lines);
        }
    }
    if !pending.is_empty() {
        out.lock().unwrap_or_else(|p| p.into_inner()).write(&pending);
    }
}

/// The signals passed on to the client: Ctrl-C, `kill`, a closed terminal, Ctrl-\.
#[cfg(unix)]
const FORWARDED: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Run the command: its stdout and stderr copied to `live` and to `log` line by line as they
/// come; the signals bench-normalize gets passed on to it.
///
/// The client runs in a process group of its own, and a signal bench-normalize receives is sent
/// to that group: a Ctrl-C at the terminal reaches the client once (not once from the terminal
/// and once forwarded), a `kill -INT` of bench-normalize reaches it too, and bench-normalize
/// itself lives on to report what the client printed. Its stdin is the terminal's only when that
/// is no terminal (a background process group reading one would be stopped).
pub(super) fn launch(command: &[String], log: File, live: Box<dyn Write + Send>) -> io::Result<Ended> {
    let (program, args) = command.split_first().ok_or_else(|| io::Error::other("no command"))?;
    let mut cmd = Command::new(program);
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    if io::IsTerminal::is_terminal(&io::stdin()) {
        cmd.stdin(Stdio::null());
    }
    // Python buffers a pipe's output: without this nothing would show until the end.
    if std::env::var_os("PYTHONUNBUFFERED").is_none() {
        cmd.env("PYTHONUNBUFFERED", "1");
    }
    #[cfg(unix)]
    let signals = {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        #[cfg(target_os = "linux")]
        // SAFETY: prctl is async-signal-safe and touches no memory of the parent: if
        // bench-normalize dies (SIGKILL), the client is told with SIGTERM rather than orphaned.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        // Registered before the client starts: a signal that comes meanwhile waits for it.
        signal_hook::iterator::Signals::new(FORWARDED)?
    };
    let started = SystemTime::now();
    let mut child: Child = cmd.spawn()?;
    #[cfg(unix)]
    let (forwarder, handle) = {
        let pid = child.id() as libc::pid_t;
        let handle = signals.handle();
        let mut signals = signals;
        let forwarder = std::thread::spawn(move || {
            let mut sent = Vec::new();
            for sig in signals.forever() {
                // SAFETY: kill(2) with the client's process group id; no memory is involved.
                unsafe { libc::kill(-pid, sig) };
                sent.push(sig);
            }
            sent
        });
        (forwarder, handle)
    };
    let out = Arc::new(Mutex::new(Outputs { live, log, log_failed: None, last: None }));
    let mut pumps = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        let out = Arc::clone(&out);
        pumps.push(std::thread::spawn(move || pump(stdout, &out)));
    }
    if let Some(stderr) = child.stderr.take() {
        let out = Arc::clone(&out);
        pumps.push(std::thread::spawn(move || pump(stderr, &out)));
    }
    let status = child.wait();
    for p in pumps {
        let _ = p.join();
    }
    let ended = SystemTime::now();
    #[cfg(unix)]
    let forwarded = {
        handle.close();
        forwarder.join().unwrap_or_default()
    };
    #[cfg(not(unix))]
    let forwarded = Vec::new();
    let status = status?;
    let mut out = out.lock().unwrap_or_else(|p| p.into_inner());
    if out.last.is_some_and(|b| b != b'\n') {
        // A progress bar's `\r` (or a last line without its end): the diagnostics after it
        // would overwrite it.
        let _ = out.live.write_all(b"\n").and_then(|_| out.live.flush());
    }
    if let Some(e) = out.log_failed.take() {
        return Err(e);
    }
    out.log.flush()?;
    Ok(Ended { status, started, ended, forwarded })
}

/// The client's version, asked from its Python distribution with the interpreter that runs it
/// (`importlib.metadata`, which imports nothing of the client); and how it was asked, or why
/// it is unknown.
pub(super) fn client_version(client: &Client, plan: &Plan) -> (Option<String>, String) {
    let interpreter = match &plan.interpreter {
        Some(p) => Some(p.clone()),
        None => {
            let program = plan.command.get(plan.args_at.saturating_sub(1 + words_of(client, plan)));
            program.and_then(|p| shebang_interpreter(p))
        }
    };
    let Some(python) = interpreter else {
        return (
            None,
            format!("unknown: no Python interpreter found for {} (its script has no python #! line)", client.tool),
        );
    };
    let code = format!("import importlib.metadata as m; print(m.version({:?}))", client.package);
    let asked = format!("importlib.metadata.version({:?}) with {python}", client.package);
    match output_within(Command::new(&python).args(["-c", &code]), Duration::from_secs(30)) {
        Some(v) if !v.is_empty() && !v.contains(char::is_whitespace) => (Some(v), asked),
        Some(_) | None => (None, format!("unknown: {asked} gave no version")),
    }
}

/// How many subcommand words follow the program in `plan`'s command.
fn words_of(client: &Client, plan: &Plan) -> usize {
    client
        .programs
        .iter()
        .find(|p| {
            let n = p.words.len();
            plan.args_at > n && plan.command[plan.args_at - n..plan.args_at] == p.words[..]
        })
        .map_or(0, |p| p.words.len())
}

/// A program on PATH (or a path).
fn which(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(program)).find(|p| p.is_file())
}

/// The Python interpreter of a console script's `#!` line (`#!/opt/venv/bin/python`, or
/// `#!/usr/bin/env python3`).
fn shebang_interpreter(program: &str) -> Option<String> {
    let path = which(program)?;
    let mut head = Vec::new();
    File::open(path).ok()?.take(512).read_to_end(&mut head).ok()?;
    let line = String::from_utf8_lossy(head.split(|b| *b == b'\n').next()?).into_owned();
    let mut words = line.strip_prefix("#!")?.split_whitespace();
    let first = words.next()?;
    let python = if file_name(first) == "env" { words.find(|w| !w.starts_with('-'))? } else { first };
    is_python(python).then(|| python.to_string())
}

/// A command's stdout (trimmed) when it succeeds within `limit`; killed otherwise.
fn output_within(cmd: &mut Command, limit: Duration) -> Option<String> {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let text = reader.join().ok()?;
    status.filter(ExitStatus::success).map(|_| text.trim().to_string())
}

/// A time as RFC 3339, UTC, to the millisecond.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_millis(1_764_590_400_123)), "2025-12-01T12:00:00.123Z");
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)), "2000-02-29T00:00:00.000Z");
    }
}
