//! lumberjack's mill (`millRun`, `millRunOnce`): after a rotation, on a thread of its own,
//! removes the backups beyond the count and age limits and gzips the others.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use flate2::Compression;
use flate2::write::GzEncoder;
use kas_apimachinery::golang::time::{Time, parse_rfc3339};

use super::{Settings, chown_like, path_error, prefix_and_ext};

const COMPRESS_SUFFIX: &str = ".gz";

/// The mill thread and its wake-up channel (lumberjack's `millCh`, one pending run).
pub(super) struct Mill {
    wake: SyncSender<()>,
    thread: JoinHandle<()>,
}

impl Mill {
    /// The thread started; `None` (logged) when the system has no thread to give, and
    /// the clean-up waits for the next rotation.
    pub(super) fn start(settings: Arc<Settings>) -> Option<Mill> {
        let (wake, rx) = sync_channel(1);
        let spawned = std::thread::Builder::new()
            .name("audit-log-mill".to_owned())
            .spawn(move || run(&settings, &rx));
        match spawned {
            Ok(thread) => Some(Mill { wake, thread }),
            Err(e) => {
                tracing::error!(error = %e, "audit log: starting the old log files' clean-up");
                None
            }
        }
    }

    /// Asks for a run; one already pending covers this one.
    pub(super) fn wake(&self) {
        let _ = self.wake.try_send(());
    }

    /// Lets a pending run finish and ends the thread.
    pub(super) fn stop(self) {
        drop(self.wake);
        let _ = self.thread.join();
    }
}

fn run(settings: &Settings, rx: &Receiver<()>) {
    while rx.recv().is_ok() {
        // lumberjack drops these errors ("what am I going to do, log this?").
        if let Err(e) = run_once(settings) {
            tracing::debug!(error = %e, "audit log: cleaning up old log files");
        }
    }
}

/// A backup and the time its name holds.
struct Backup {
    time: Time,
    name: String,
}

/// lumberjack's `millRunOnce`.
fn run_once(settings: &Settings) -> io::Result<()> {
    let config = &settings.config;
    if config.max_backups == 0 && config.max_age_days == 0 && !config.compress {
        return Ok(());
    }
    let mut files = old_log_files(settings)?;
    let mut remove = Vec::new();
    if config.max_backups > 0 && config.max_backups < files.len() {
        let mut preserved = HashSet::new();
        let mut remaining = Vec::new();
        for f in files {
            // A backup and its compressed copy count once.
            preserved.insert(f.name.trim_end_matches(COMPRESS_SUFFIX).to_owned());
            if preserved.len() > config.max_backups {
                remove.push(f);
            } else {
                remaining.push(f);
            }
        }
        files = remaining;
    }
    if config.max_age_days > 0 {
        let now = Time::from_system_time((settings.now)());
        let age = i64::try_from(config.max_age_days.saturating_mul(86_400)).unwrap_or(i64::MAX);
        let cutoff = (now.seconds.saturating_sub(age), now.nanos);
        let (old, remaining) = files
            .into_iter()
            .partition(|f| (f.time.seconds, f.time.nanos) < cutoff);
        remove.extend::<Vec<Backup>>(old);
        files = remaining;
    }
    let dir = settings.dir();
    let mut result = Ok(());
    for f in &remove {
        let path = dir.join(&f.name);
        if let Err(e) = fs::remove_file(&path) {
            result = result.and(Err(path_error("remove", &path, &e)));
        }
    }
    if config.compress {
        for f in files.iter().filter(|f| !f.name.ends_with(COMPRESS_SUFFIX)) {
            let src = dir.join(&f.name);
            let dst = dir.join(format!("{}{COMPRESS_SUFFIX}", f.name));
            result = result.and(compress_log_file(&src, &dst));
        }
    }
    result
}

/// lumberjack's `oldLogFiles`: the backups beside the file, newest first.
fn old_log_files(settings: &Settings) -> io::Result<Vec<Backup>> {
    let dir = settings.dir();
    let entries = fs::read_dir(dir).map_err(|e| {
        let e = path_error("open", dir, &e);
        io::Error::new(e.kind(), format!("can't read log file directory: {e}"))
    })?;
    let (prefix, ext) = prefix_and_ext(&settings.filename);
    let prefix = format!("{prefix}-");
    let compressed_ext = format!("{ext}{COMPRESS_SUFFIX}");
    let mut files = Vec::new();
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let time = time_from_name(&name, &prefix, &ext)
            .or_else(|| time_from_name(&name, &prefix, &compressed_ext));
        // A name whose middle is not lumberjack's timestamp is not a backup.
        if let Some(time) = time {
            files.push(Backup { time, name });
        }
    }
    files.sort_by_key(|f| std::cmp::Reverse((f.time.seconds, f.time.nanos)));
    Ok(files)
}

/// lumberjack's `timeFromName`: the time between `prefix` and `ext`, parsed as
/// `2006-01-02T15-04-05.000`.
fn time_from_name(name: &str, prefix: &str, ext: &str) -> Option<Time> {
    let ts = name.strip_prefix(prefix)?.strip_suffix(ext)?;
    parse_backup_time(ts)
}

/// `time.Parse("2006-01-02T15-04-05.000", ts)`: exactly three fraction digits.
fn parse_backup_time(ts: &str) -> Option<Time> {
    let b = ts.as_bytes();
    if b.len() != 23 || b[13] != b'-' || b[16] != b'-' || b[19] != b'.' {
        return None;
    }
    if !b[20..].iter().all(u8::is_ascii_digit) {
        return None;
    }
    parse_rfc3339(&format!("{}:{}:{}Z", &ts[..13], &ts[14..16], &ts[17..]))
}

/// lumberjack's `compressLogFile`: `src` gzipped into `dst` with its mode and owner, then
/// removed; a partial `dst` is removed.
fn compress_log_file(src: &Path, dst: &Path) -> io::Result<()> {
    let wrap = |what: &str, e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));
    let mut input = File::open(src)
        .map_err(|e| wrap("failed to open log file", path_error("open", src, &e)))?;
    let info = fs::metadata(src)
        .map_err(|e| wrap("failed to stat log file", path_error("stat", src, &e)))?;
    chown_like(dst, &info).map_err(|e| wrap("failed to chown compressed log file", e))?;
    let output = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(info.permissions().mode() & 0o7777)
        .open(dst)
        .map_err(|e| {
            wrap(
                "failed to open compressed log file",
                path_error("open", dst, &e),
            )
        })?;
    let done = (|| {
        let mut gz = GzEncoder::new(output, Compression::default());
        io::copy(&mut input, &mut gz)?;
        drop(gz.finish()?);
        drop(input);
        fs::remove_file(src).map_err(|e| path_error("remove", src, &e))
    })();
    done.map_err(|e| {
        let _ = fs::remove_file(dst);
        wrap("failed to compress log file", e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_times_parse_as_lumberjack_layout() {
        let t = parse_backup_time("2024-01-02T03-04-05.123").unwrap();
        assert_eq!((t.seconds, t.nanos), (1_704_164_645, 123_000_000));
        for bad in [
            "2024-01-02T03-04-05",
            "2024-01-02T03-04-05.12",
            "2024-01-02T03-04-05.1234",
            "2024-01-02T03:04:05.123",
            "2024-13-02T03-04-05.123",
            "2024-02-30T03-04-05.123",
        ] {
            assert!(parse_backup_time(bad).is_none(), "{bad}");
        }
        assert!(time_from_name("audit-2024-01-02T03-04-05.123.log", "audit-", ".log").is_some());
        assert!(time_from_name("audit-2024-01-02T03-04-05.123.log", "other-", ".log").is_none());
        assert!(time_from_name("audit-x.log", "audit-", ".log").is_none());
    }
}
