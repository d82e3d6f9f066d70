use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use super::*;

/// 2024-01-02T03:04:05Z, in milliseconds.
const START_MS: u64 = 1_704_164_645_000;

/// A file rotated past `max_bytes`, whose clock starts at [`START_MS`] and moves a second
/// each time it is read.
fn file(dir: &Path, max_bytes: u64, config: RotateConfig) -> RotatingFile {
    let ms = AtomicU64::new(START_MS);
    RotatingFile::with_clock(
        dir.join("audit.log"),
        config,
        max_bytes,
        Box::new(move || UNIX_EPOCH + Duration::from_millis(ms.fetch_add(1000, Ordering::SeqCst))),
    )
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

fn line(n: usize) -> String {
    // 40 bytes: two fit under 100, a third rotates.
    format!("{n:039}\n")
}

#[test]
fn rotation_by_size_names_backups_by_utc_time_and_keeps_maxbackup() {
    let dir = tempfile::tempdir().unwrap();
    let config = RotateConfig {
        max_backups: 2,
        ..RotateConfig::default()
    };
    let f = file(dir.path(), 100, config);
    for n in 0..9 {
        f.write(line(n).as_bytes()).unwrap();
    }
    f.close();
    // Rotated before writes 2, 4, 6 and 8; the two newest backups are kept.
    assert_eq!(
        names(dir.path()),
        [
            "audit-2024-01-02T03-04-07.000.log",
            "audit-2024-01-02T03-04-08.000.log",
            "audit.log"
        ]
    );
    let backup = |name: &str| read(&dir.path().join(name));
    assert_eq!(
        backup("audit-2024-01-02T03-04-07.000.log"),
        line(4) + &line(5)
    );
    assert_eq!(
        backup("audit-2024-01-02T03-04-08.000.log"),
        line(6) + &line(7)
    );
    assert_eq!(backup("audit.log"), line(8));
}

#[test]
fn no_limits_keep_every_backup() {
    let dir = tempfile::tempdir().unwrap();
    let f = file(dir.path(), 100, RotateConfig::default());
    for n in 0..9 {
        f.write(line(n).as_bytes()).unwrap();
    }
    f.close();
    assert_eq!(names(dir.path()).len(), 5);
}

#[test]
fn compress_gzips_the_backups() {
    let dir = tempfile::tempdir().unwrap();
    let config = RotateConfig {
        compress: true,
        ..RotateConfig::default()
    };
    let f = file(dir.path(), 100, config);
    for n in 0..5 {
        f.write(line(n).as_bytes()).unwrap();
    }
    f.close();
    assert_eq!(
        names(dir.path()),
        [
            "audit-2024-01-02T03-04-05.000.log.gz",
            "audit-2024-01-02T03-04-06.000.log.gz",
            "audit.log"
        ]
    );
    let gz = File::open(dir.path().join("audit-2024-01-02T03-04-06.000.log.gz")).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text, line(2) + &line(3));
    let mode = fs::metadata(dir.path().join("audit-2024-01-02T03-04-06.000.log.gz"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn maxage_removes_backups_older_than_the_days() {
    let dir = tempfile::tempdir().unwrap();
    let day = Duration::from_secs(86_400);
    let old = format!(
        "audit-{}.log",
        backup_timestamp(SystemTime::now() - 10 * day)
    );
    let recent = format!("audit-{}.log.gz", backup_timestamp(SystemTime::now() - day));
    for name in [&old, &recent, &"audit-notatime.log".to_owned()] {
        fs::write(dir.path().join(name), "x").unwrap();
    }
    let config = RotateConfig {
        max_age_days: 3,
        ..RotateConfig::default()
    };
    let f = RotatingFile::new(dir.path().join("audit.log"), config);
    // The first write opens the file and runs the mill.
    f.write(b"a\n").unwrap();
    f.close();
    let left = names(dir.path());
    assert!(!left.contains(&old), "{left:?}");
    assert!(left.contains(&recent), "{left:?}");
    assert!(left.contains(&"audit-notatime.log".to_owned()), "{left:?}");
}

#[test]
fn an_existing_file_is_appended_to_or_rotated_when_it_would_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.log");
    fs::write(&path, "old\n").unwrap();
    let f = file(dir.path(), 100, RotateConfig::default());
    f.write(b"new\n").unwrap();
    f.close();
    assert_eq!(read(&path), "old\nnew\n");

    fs::write(&path, "x".repeat(80)).unwrap();
    let f = file(dir.path(), 100, RotateConfig::default());
    // 80 + 20 reaches the maximum: lumberjack rotates on open at >=, on write at >.
    f.write(&[b'y'; 20]).unwrap();
    f.close();
    assert_eq!(read(&path), "y".repeat(20));
    assert_eq!(
        read(&dir.path().join("audit-2024-01-02T03-04-05.000.log")),
        "x".repeat(80)
    );
}

#[test]
fn a_new_file_keeps_the_old_ones_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.log");
    let f = file(dir.path(), 100, RotateConfig::default());
    f.write(b"a\n").unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    f.rotate().unwrap();
    assert_eq!(mode(&path), 0o640);
    f.close();
}

#[test]
fn a_write_larger_than_the_maximum_fails() {
    let dir = tempfile::tempdir().unwrap();
    let f = file(dir.path(), 100, RotateConfig::default());
    let err = f.write(&[b'x'; 101]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "write length 101 exceeds maximum file size 100"
    );
    let f = RotatingFile::new(dir.path().join("audit.log"), RotateConfig::default());
    assert_eq!(f.settings.max_bytes, 100 * 1024 * 1024);
}

#[test]
fn ensure_log_file_makes_the_directory_and_a_private_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/audit.log");
    ensure_log_file(&path).unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&dir.path().join("a/b")), 0o700);
    let err = ensure_log_file(&path.join("x")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("mkdir {}: ", path.display())),
        "{err}"
    );
}

#[test]
fn backup_names_put_the_time_before_the_extension() {
    let t = UNIX_EPOCH + Duration::from_millis(START_MS + 123);
    assert_eq!(
        backup_name(Path::new("/var/log/audit.log"), t),
        Path::new("/var/log/audit-2024-01-02T03-04-05.123.log")
    );
    assert_eq!(
        backup_name(Path::new("audit"), t),
        Path::new("audit-2024-01-02T03-04-05.123")
    );
}
