//! Running the client: a process group of its own, its output copied live and to a log line by
//! line, signals passed on; and asking its version from the Python that runs it.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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
    /// What happened to processes the client left behind, said as warnings.
    pub(super) notes: Vec<String>,
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
        if self.log_failed.is_none()
            && let Err(e) = self.log.write_all(bytes)
        {
            self.log_failed = Some(e);
        }
    }

    /// A line of bench-normalize's own among the client's (live only, not in the log), on a
    /// line of its own.
    fn say(&mut self, line: &str) {
        let lead = if self.last.is_some_and(|b| b != b'\n') { "\n" } else { "" };
        let _ = writeln!(self.live, "{lead}bench-normalize: {line}").and_then(|_| self.live.flush());
        self.last = Some(b'\n');
    }
}

/// How long the client's output is still read after the client has exited: what it wrote just
/// before exiting is in the pipe; a process it left in the background may hold the pipe open
/// for ever (`bash -c 'server & vllm bench serve ...'`), and is not waited for.
pub(super) const DRAIN: Duration = Duration::from_secs(2);

/// How long processes the client left holding its output get after SIGTERM before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(2);

/// How often a pump looks whether it is told to stop while its pipe is quiet.
const TICK: Duration = Duration::from_millis(50);

/// A pipe that can be waited on with a time limit.
#[cfg(unix)]
trait Pipe: Read + std::os::fd::AsFd {}
#[cfg(unix)]
impl<T: Read + std::os::fd::AsFd> Pipe for T {}
#[cfg(not(unix))]
trait Pipe: Read {}
#[cfg(not(unix))]
impl<T: Read> Pipe for T {}

/// Whether the pipe has bytes (or its end) within `TICK`.
#[cfg(unix)]
fn readable(from: &impl Pipe) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let tick = Timespec { tv_sec: 0, tv_nsec: TICK.as_nanos() as i64 };
    // An error (EINTR) is taken as "look again".
    poll(&mut [PollFd::new(from, PollFlags::IN)], Some(&tick)).is_ok_and(|n| n > 0)
}

#[cfg(not(unix))]
fn readable(_: &impl Pipe) -> bool {
    true
}

/// Copy a pipe to `out`, whole lines at a time (`\n` or tqdm's `\r`) as they come, so that the
/// client's stdout and stderr do not cut into each other's lines; until its end, or until
/// `stop` is set. A line longer than the text reader's cap ([`bench_normalize_core::input::MAX_LINE`]) goes out
/// in pieces of that size: memory holds one such piece whatever the client writes, and each
/// read is searched for a line end in its new bytes only. Whether the pipe's end was reached.
fn pump(mut from: impl Pipe, out: &Mutex<Outputs>, stop: &AtomicBool) -> bool {
    let mut buf = vec![0u8; 16 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    let cap = bench_normalize_core::input::MAX_LINE;
    let ended = loop {
        if stop.load(Ordering::Relaxed) {
            break false;
        }
        if !readable(&from) {
            continue;
        }
        let n = match from.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break true,
        };
        let new = &buf[..n];
        match new.iter().rposition(|b| *b == b'\n' || *b == b'\r') {
            Some(end) => {
                pending.extend_from_slice(&new[..=end]);
                out.lock().unwrap_or_else(|p| p.into_inner()).write(&pending);
                pending.clear();
                pending.extend_from_slice(&new[end + 1..]);
            }
            None => pending.extend_from_slice(new),
        }
        if pending.len() >= cap {
            out.lock().unwrap_or_else(|p| p.into_inner()).write(&pending);
            pending.clear();
        }
    };
    if !pending.is_empty() {
        out.lock().unwrap_or_else(|p| p.into_inner()).write(&pending);
    }
    ended
}

/// The signals passed on to the client: Ctrl-C, `kill`, a closed terminal, Ctrl-\.
#[cfg(unix)]
const FORWARDED: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Whether any process is left in the process group `pgid`.
#[cfg(unix)]
fn group_alive(pgid: libc::pid_t) -> bool {
    // SAFETY: kill(2) with signal 0 only checks that the group exists.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

/// End the process group `pgid`: SIGTERM, then SIGKILL when it is still there after
/// [`TERM_GRACE`]. The signals sent.
#[cfg(unix)]
fn end_group(pgid: libc::pid_t) -> Vec<i32> {
    // SAFETY: kill(2) of the client's process group; no memory is involved.
    unsafe { libc::kill(-pgid, libc::SIGTERM) };
    let deadline = Instant::now() + TERM_GRACE;
    while Instant::now() < deadline {
        if !group_alive(pgid) {
            return vec![libc::SIGTERM];
        }
        std::thread::sleep(TICK);
    }
    // SAFETY: as above.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    vec![libc::SIGTERM, libc::SIGKILL]
}

/// Run the command: its stdout and stderr copied to `live` and to `log` line by line as they
/// come; the signals bench-normalize gets passed on to it.
///
/// The client runs in a process group of its own, and a signal bench-normalize receives is sent
/// to that group: a Ctrl-C at the terminal reaches the client once (not once from the terminal
/// and once forwarded), a `kill -INT` of bench-normalize reaches it too, and bench-normalize
/// itself lives on to report what the client printed. A second signal (a client that ignores
/// or is slow to act on the first) ends the whole group with SIGKILL, as `timeout
/// --kill-after` does. Its stdin is the terminal's only when that is no terminal (a background
/// process group reading one would be stopped).
///
/// When the client has exited, its output is read for [`DRAIN`] more at most: processes it left
/// in its process group that still hold the output open are then ended (SIGTERM, SIGKILL after
/// [`TERM_GRACE`]), and said so; processes of the group that let go of the output (a server
/// started with its output redirected) are left running, and said so.
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
    let out = Arc::new(Mutex::new(Outputs { live, log, log_failed: None, last: None }));
    #[cfg(unix)]
    let pgid = child.id() as libc::pid_t;
    #[cfg(unix)]
    let (forwarder, handle) = {
        let handle = signals.handle();
        let mut signals = signals;
        let out = Arc::clone(&out);
        let forwarder = std::thread::spawn(move || {
            let mut sent = Vec::new();
            for sig in signals.forever() {
                if sent.is_empty() {
                    // SAFETY: kill(2) with the client's process group id; no memory is involved.
                    unsafe { libc::kill(-pgid, sig) };
                    sent.push(sig);
                    out.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .say(&format!("signal {sig} passed on to the client; a second one ends it (SIGKILL)"));
                } else if !sent.contains(&libc::SIGKILL) {
                    // SAFETY: as above.
                    unsafe { libc::kill(-pgid, libc::SIGKILL) };
                    sent.extend([sig, libc::SIGKILL]);
                    out.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .say("signalled again: the client's process group is ended (SIGKILL)");
                }
            }
            sent
        });
        (forwarder, handle)
    };
    let stop = Arc::new(AtomicBool::new(false));
    let mut pumps = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        let (out, stop) = (Arc::clone(&out), Arc::clone(&stop));
        pumps.push(std::thread::spawn(move || pump(stdout, &out, &stop)));
    }
    if let Some(stderr) = child.stderr.take() {
        let (out, stop) = (Arc::clone(&out), Arc::clone(&stop));
        pumps.push(std::thread::spawn(move || pump(stderr, &out, &stop)));
    }
    let status = child.wait();
    let ended = SystemTime::now();
    let drained = Instant::now() + DRAIN;
    while pumps.iter().any(|p| !p.is_finished()) && Instant::now() < drained {
        std::thread::sleep(Duration::from_millis(10));
    }
    stop.store(true, Ordering::Relaxed);
    let held = pumps.into_iter().map(|p| p.join().unwrap_or(true)).any(|ended| !ended);
    let mut notes = Vec::new();
    #[cfg(unix)]
    let mut ended_group = Vec::new();
    #[cfg(unix)]
    if held {
        ended_group = end_group(pgid);
        notes.push(format!(
            "the client exited but processes it started kept its output open {} s later: its process group {pgid} \
             was ended ({})",
            DRAIN.as_secs(),
            if ended_group.len() > 1 { "SIGTERM, then SIGKILL" } else { "SIGTERM" }
        ));
    } else if group_alive(pgid) {
        notes.push(format!(
            "processes the client started are still running in its process group {pgid} (their output is not the \
             client's): left running"
        ));
    }
    #[cfg(not(unix))]
    if held {
        notes.push(format!("the client exited but its output stayed open {} s later: no longer read", DRAIN.as_secs()));
    }
    #[cfg(unix)]
    let forwarded = {
        handle.close();
        let mut sent = forwarder.join().unwrap_or_default();
        sent.extend(ended_group);
        sent
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
    Ok(Ended { status, started, ended, forwarded, notes })
}

/// The client's version, and how it was found, or every lookup that failed and why. Asked in
/// turn, each through the wrappers that decide which client runs (`env`, `uv run`):
/// 1. its Python distribution's metadata, with the interpreter that runs it (named in the
///    command, or its script's `#!` line): `importlib.metadata`, which imports nothing of it;
/// 2. the client itself, `PROGRAM --version`, for a client run as a program (`vllm --version`);
/// 3. `pip show PACKAGE` with that interpreter (or `python3`).
pub(super) fn client_version(client: &Client, plan: &Plan) -> (Option<String>, String) {
    let program = plan.words.get(plan.program_at).cloned().unwrap_or_default();
    let interpreter = plan.interpreter.clone().or_else(|| shebang_interpreter(&program));
    let through = |args: Vec<String>| -> Vec<String> { plan.launcher.iter().cloned().chain(args).collect() };
    let mut failed = Vec::new();
    let limit = Duration::from_secs(30);
    if let Some(python) = &interpreter {
        let code = format!("import importlib.metadata as m; print(m.version({:?}))", client.package);
        let asked = format!("importlib.metadata.version({:?}) with {python}", client.package);
        match output_within(&through(vec![python.clone(), "-c".into(), code]), limit).map(|o| version_in(&o, None)) {
            Ok(Some(v)) => return (Some(v), asked),
            Ok(None) => failed.push(format!("{asked} printed no version")),
            Err(why) => failed.push(format!("{asked}: {why}")),
        }
    } else {
        failed.push(format!(
            "importlib.metadata: no Python interpreter found for {} (the command names none, and {} has no python \
             #! line)",
            client.tool,
            file_name(&program)
        ));
    }
    if plan.interpreter.is_none() && !program.is_empty() {
        let asked = format!("`{} --version`", file_name(&program));
        match output_within(&through(vec![program.clone(), "--version".into()]), limit).map(|o| version_in(&o, None)) {
            Ok(Some(v)) => return (Some(v), asked),
            Ok(None) => failed.push(format!("{asked} printed no version")),
            Err(why) => failed.push(format!("{asked}: {why}")),
        }
    }
    let python = interpreter.unwrap_or_else(|| "python3".into());
    let asked = format!("`{python} -m pip show {}`", client.package);
    let pip = through(vec![python.clone(), "-m".into(), "pip".into(), "show".into(), client.package.clone()]);
    match output_within(&pip, limit).map(|o| version_in(&o, Some("Version:"))) {
        Ok(Some(v)) => return (Some(v), asked),
        Ok(None) => failed.push(format!("{asked} printed no version")),
        Err(why) => failed.push(format!("{asked}: {why}")),
    }
    (None, format!("unknown: {}", failed.join("; ")))
}

/// A version in a command's output: the first word shaped like one (`0.11.0`, `v1.2.3rc1`),
/// on the line that starts with `label` when one is given.
pub(super) fn version_in(output: &str, label: Option<&str>) -> Option<String> {
    let text = match label {
        Some(l) => output.lines().find_map(|line| line.trim().strip_prefix(l))?,
        None => output,
    };
    text.split_whitespace()
        .map(|w| w.trim_start_matches('v').trim_end_matches([',', ';', ')']))
        .find(|w| {
            let mut parts = w.split('.');
            parts.next().is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                && parts.next().is_some_and(|p| p.starts_with(|c: char| c.is_ascii_digit()))
                && w.bytes().all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b))
        })
        .map(String::from)
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

/// A command's stdout (trimmed) when it succeeds within `limit`; killed otherwise; or why not.
fn output_within(argv: &[String], limit: Duration) -> Result<String, String> {
    let (program, args) = argv.split_first().ok_or("no command")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("could not run {program}: {e}"))?;
    let stdout = child.stdout.take().ok_or("no output")?;
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.take(1 << 20).read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break Err(format!("no answer within {} s", limit.as_secs()));
            }
        }
    };
    let text = reader.join().map_err(|_| "its output was lost".to_string())?;
    match status? {
        s if s.success() => Ok(text.trim().to_string()),
        s => Err(match s.code() {
            Some(c) => format!("exit status {c}"),
            None => "ended by a signal".into(),
        }),
    }
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

    /// A writer that keeps the size of the largest write it was given.
    struct Largest(Arc<std::sync::atomic::AtomicUsize>);

    impl Write for Largest {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.fetch_max(b.len(), Ordering::Relaxed);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A line without an end is passed on in pieces no larger than the text reader's line cap
    /// (plus one read): what the pump holds is bounded, and every byte gets through.
    #[test]
    fn a_line_without_an_end_is_passed_on_in_bounded_pieces() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in");
        let mut bytes = vec![b'x'; 3_000_000];
        bytes.extend_from_slice(b"\nend");
        std::fs::write(&input, &bytes).unwrap();
        let largest = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let out = Mutex::new(Outputs {
            live: Box::new(Largest(Arc::clone(&largest))),
            log: File::create(dir.path().join("log")).unwrap(),
            log_failed: None,
            last: None,
        });
        assert!(pump(File::open(&input).unwrap(), &out, &AtomicBool::new(false)), "the end was reached");
        let max = largest.load(Ordering::Relaxed);
        assert!(max <= bench_normalize_core::input::MAX_LINE + 16 * 1024, "a write of {max} bytes");
        assert_eq!(std::fs::read(dir.path().join("log")).unwrap(), bytes);
    }

    #[test]
    fn versions_are_read_from_what_clients_print() {
        assert_eq!(version_in("0.11.0\n", None).as_deref(), Some("0.11.0"));
        assert_eq!(version_in("genai-perf v0.0.16 (build 3)", None).as_deref(), Some("0.0.16"));
        let pip = "Name: vllm\nVersion: 0.10.1.dev5+g1\nSummary: x 2.0";
        assert_eq!(version_in(pip, Some("Version:")).as_deref(), Some("0.10.1.dev5+g1"));
        for none in ["", "usage: vllm [-h]", "version unknown", "3"] {
            assert_eq!(version_in(none, None), None, "{none}");
        }
    }

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_millis(1_764_590_400_123)), "2025-12-01T12:00:00.123Z");
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)), "2000-02-29T00:00:00.000Z");
    }
}
