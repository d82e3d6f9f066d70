//! The file behind `--audit-log-path`: upstream's `lumberjack.Logger`
//! (gopkg.in/natefinch/lumberjack.v2), which rotates by size.
//!
//! - The file is opened on the first write: appended to if the write keeps it under the
//!   maximum size, else rotated first. A write that would take it past the maximum
//!   (`--audit-log-maxsize` megabytes, 100 when 0) rotates it: the file is renamed
//!   `<name>-<UTC time as 2006-01-02T15-04-05.000><ext>` and a new one opened with the old
//!   one's mode (0600 for a first file) and owner.
//! - After each rotation (and on the first open) a thread of its own ([`mill`]) removes
//!   backups beyond `--audit-log-maxbackup` and older than `--audit-log-maxage` days, and
//!   gzips the rest when `--audit-log-compress` is set.
//!
//! Errors are returned to the log backend, which counts and logs them; nothing panics.

mod mill;

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use kas_apimachinery::golang::net::errno;
use kas_apimachinery::golang::time::{Time, format_rfc3339_micro};

use crate::backend::Writer;

/// lumberjack's `defaultMaxSize`, in megabytes, used when the size is 0.
const DEFAULT_MAX_SIZE_MB: u64 = 100;
const MEGABYTE: u64 = 1024 * 1024;

/// The `--audit-log-*` rotation flags (lumberjack's `Logger` fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RotateConfig {
    /// `--audit-log-maxsize`: megabytes before rotating; 0 means 100.
    pub max_size_mb: u64,
    /// `--audit-log-maxage`: days a backup is kept (by the time in its name); 0 keeps all.
    pub max_age_days: u64,
    /// `--audit-log-maxbackup`: backups kept; 0 keeps all.
    pub max_backups: usize,
    /// `--audit-log-compress`: gzip the backups.
    pub compress: bool,
}

/// What the writer and its mill share.
struct Settings {
    filename: PathBuf,
    max_bytes: u64,
    config: RotateConfig,
    /// lumberjack's `currentTime`, replaced in tests.
    now: Box<dyn Fn() -> SystemTime + Send + Sync>,
}

impl Settings {
    fn dir(&self) -> &Path {
        dir_of(&self.filename)
    }
}

struct State {
    file: Option<File>,
    size: u64,
    mill: Option<mill::Mill>,
}

/// lumberjack's `Logger`: a file rotated by size.
pub struct RotatingFile {
    settings: Arc<Settings>,
    state: Mutex<State>,
}

impl RotatingFile {
    pub fn new(filename: impl Into<PathBuf>, config: RotateConfig) -> RotatingFile {
        let max_mb = match config.max_size_mb {
            0 => DEFAULT_MAX_SIZE_MB,
            mb => mb,
        };
        Self::with_clock(
            filename.into(),
            config,
            max_mb.saturating_mul(MEGABYTE),
            Box::new(SystemTime::now),
        )
    }

    fn with_clock(
        filename: PathBuf,
        config: RotateConfig,
        max_bytes: u64,
        now: Box<dyn Fn() -> SystemTime + Send + Sync>,
    ) -> RotatingFile {
        RotatingFile {
            settings: Arc::new(Settings {
                filename,
                max_bytes,
                config,
                now,
            }),
            state: Mutex::new(State {
                file: None,
                size: 0,
                mill: None,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the state consistent enough to go on.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// lumberjack's `Write`: `p` whole into the file, rotating first if it would pass the
    /// maximum size.
    pub fn write(&self, p: &[u8]) -> io::Result<usize> {
        let mut state = self.lock();
        let len = p.len() as u64;
        let max = self.settings.max_bytes;
        if len > max {
            return Err(io::Error::other(format!(
                "write length {len} exceeds maximum file size {max}"
            )));
        }
        if state.file.is_none() {
            self.open_existing_or_new(&mut state, len)?;
        }
        if state.size + len > max {
            self.rotate_locked(&mut state)?;
        }
        let Some(file) = state.file.as_mut() else {
            return Err(io::Error::other("log file not open"));
        };
        match file.write_all(p) {
            Ok(()) => {
                state.size += len;
                Ok(p.len())
            }
            Err(e) => Err(path_error("write", &self.settings.filename, &e)),
        }
    }

    /// lumberjack's `Rotate`: moves the file aside now and opens a new one.
    pub fn rotate(&self) -> io::Result<()> {
        let mut state = self.lock();
        self.rotate_locked(&mut state)
    }

    /// Closes the file and waits for the mill to finish; a later write opens it again.
    pub fn close(&self) {
        let mill = {
            let mut state = self.lock();
            state.file = None;
            state.mill.take()
        };
        if let Some(mill) = mill {
            mill.stop();
        }
    }

    fn rotate_locked(&self, state: &mut State) -> io::Result<()> {
        state.file = None;
        self.open_new(state)?;
        self.mill(state);
        Ok(())
    }

    /// lumberjack's `openNew`: moves an existing file to its backup name and opens a new
    /// one with its mode and owner.
    fn open_new(&self, state: &mut State) -> io::Result<()> {
        let name = &self.settings.filename;
        let dir = self.settings.dir();
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(dir)
            .map_err(|e| {
                let e = path_error("mkdir", dir, &e);
                io::Error::new(
                    e.kind(),
                    format!("can't make directories for new logfile: {e}"),
                )
            })?;
        let mut mode = 0o600;
        if let Ok(info) = fs::metadata(name) {
            mode = info.permissions().mode() & 0o7777;
            let backup = backup_name(name, (self.settings.now)());
            fs::rename(name, &backup).map_err(|e| {
                let text = format!(
                    "can't rename log file: rename {} {}: {}",
                    name.display(),
                    backup.display(),
                    errno(&e)
                );
                io::Error::new(e.kind(), text)
            })?;
            chown_like(name, &info)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .mode(mode)
            .open(name)
            .map_err(|e| {
                let e = path_error("open", name, &e);
                io::Error::new(e.kind(), format!("can't open new logfile: {e}"))
            })?;
        state.file = Some(file);
        state.size = 0;
        Ok(())
    }

    /// lumberjack's `openExistingOrNew`: appends to the file if `write_len` more bytes
    /// keep it under the maximum, else rotates it.
    fn open_existing_or_new(&self, state: &mut State, write_len: u64) -> io::Result<()> {
        self.mill(state);
        let name = &self.settings.filename;
        let info = match fs::metadata(name) {
            Ok(info) => info,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return self.open_new(state),
            Err(e) => {
                let e = path_error("stat", name, &e);
                return Err(io::Error::new(
                    e.kind(),
                    format!("error getting log file info: {e}"),
                ));
            }
        };
        if info.len() + write_len >= self.settings.max_bytes {
            return self.rotate_locked(state);
        }
        match OpenOptions::new().append(true).open(name) {
            Ok(file) => {
                state.file = Some(file);
                state.size = info.len();
                Ok(())
            }
            // As lumberjack: a file that does not open is replaced by a new one.
            Err(_) => self.open_new(state),
        }
    }

    /// lumberjack's `mill`: wakes the mill thread, starting it the first time.
    fn mill(&self, state: &mut State) {
        if state.mill.is_none() {
            state.mill = mill::Mill::start(self.settings.clone());
        }
        if let Some(mill) = &state.mill {
            mill.wake();
        }
    }
}

impl Writer for RotatingFile {
    fn write_line(&self, line: &[u8]) -> io::Result<()> {
        self.write(line).map(drop)
    }

    fn close(&self) {
        RotatingFile::close(self);
    }
}

impl Drop for RotatingFile {
    fn drop(&mut self) {
        self.close();
    }
}

/// Upstream's `ensureLogFile` (server/options/audit.go): the directory made (0700) and
/// the file created (0600) when the options are applied, so that a path that cannot be
/// written fails the start.
pub fn ensure_log_file(path: &Path) -> io::Result<()> {
    let dir = dir_of(path);
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| path_error("mkdir", dir, &e))?;
    OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .mode(0o600)
        .open(path)
        .map(drop)
        .map_err(|e| path_error("open", path, &e))
}

/// Go's `filepath.Dir`: `.` for a bare name.
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Go's `filepath.Ext` of the file name and the name before it.
fn prefix_and_ext(filename: &Path) -> (String, String) {
    let base = filename
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match base.rfind('.') {
        Some(i) => (base[..i].to_owned(), base[i..].to_owned()),
        None => (base, String::new()),
    }
}

/// lumberjack's `backupName`: `<dir>/<name>-<2006-01-02T15-04-05.000 in UTC><ext>`.
fn backup_name(name: &Path, now: SystemTime) -> PathBuf {
    let (prefix, ext) = prefix_and_ext(name);
    name.with_file_name(format!("{prefix}-{}{ext}", backup_timestamp(now)))
}

/// `t.UTC().Format("2006-01-02T15-04-05.000")`: MicroTime's text cut to milliseconds,
/// with dashes for colons.
fn backup_timestamp(now: SystemTime) -> String {
    let micro = format_rfc3339_micro(Time::from_system_time(now));
    micro[..23].replace(':', "-")
}

/// lumberjack's `chown`: `name` created (emptied) with `info`'s mode and given its owner.
fn chown_like(name: &Path, info: &fs::Metadata) -> io::Result<()> {
    OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(info.permissions().mode() & 0o7777)
        .open(name)
        .map_err(|e| path_error("open", name, &e))?;
    std::os::unix::fs::chown(name, Some(info.uid()), Some(info.gid()))
        .map_err(|e| path_error("chown", name, &e))
}

/// Go's `*os.PathError` text: `<op> <path>: <errno>`.
fn path_error(op: &str, path: &Path, e: &io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{op} {}: {}", path.display(), errno(e)))
}

#[cfg(test)]
mod tests;
