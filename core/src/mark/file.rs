//! The mark file: one small file in the data directory holding the largest
//! logical clock value the server may have issued. Written as temp file, fsync, rename, fsync of
//! the directory, so a crash leaves either the old or the new mark, never a torn one.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

pub const FILE_NAME: &str = "hlculid.hwm";
const MAGIC: &str = "hlculid-hwm 1";
/// The value is written twice, the second time inverted, to catch a damaged file.
const CHECK: u64 = 0x5A5A_5A5A_5A5A_5A5A;

#[derive(Debug)]
pub enum LoadError {
    Io(io::Error),
    Corrupt(String),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io(e) => write!(f, "{e}"),
            LoadError::Corrupt(s) => write!(f, "unexpected contents {s:?}"),
        }
    }
}

pub fn encode(mark: u64) -> String {
    format!("{MAGIC} {mark} {}\n", mark ^ CHECK)
}

pub fn decode(s: &str) -> Option<u64> {
    let rest = s
        .strip_suffix('\n')?
        .strip_prefix(MAGIC)?
        .strip_prefix(' ')?;
    let (a, b) = rest.split_once(' ')?;
    let (a, b): (u64, u64) = (a.parse().ok()?, b.parse().ok()?);
    (a ^ CHECK == b).then_some(a)
}

/// Reads the mark in `dir`; `Ok(None)` when there is none yet (first start).
pub fn load(dir: &Path) -> Result<Option<u64>, LoadError> {
    load_named(dir, FILE_NAME)
}

/// Reads a value written by [`store_named`]; `Ok(None)` when the file does not exist.
pub fn load_named(dir: &Path, name: &str) -> Result<Option<u64>, LoadError> {
    match fs::read(dir.join(name)) {
        Ok(bytes) => {
            let s = String::from_utf8_lossy(&bytes);
            decode(&s)
                .map(Some)
                .ok_or(LoadError::Corrupt(s.into_owned()))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(LoadError::Io(e)),
    }
}

/// Makes `mark` durable in `dir`.
pub fn store(dir: &Path, mark: u64) -> io::Result<()> {
    store_named(dir, FILE_NAME, mark)
}

/// Makes `value` durable in the file `name` of `dir`, in the mark's format (the horizon's floor
/// uses it too).
pub fn store_named(dir: &Path, name: &str, value: u64) -> io::Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let mut f = File::create(&tmp)?;
    f.write_all(encode(value).as_bytes())?;
    f.sync_all()?;
    drop(f);
    fs::rename(&tmp, dir.join(name))?;
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tempdir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("hlculid-core-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn round_trip_and_replace() {
        let d = tempdir("rt");
        assert!(matches!(load(&d), Ok(None)));
        store(&d, 42).unwrap();
        assert_eq!(load(&d).unwrap(), Some(42));
        store(&d, u64::MAX).unwrap();
        assert_eq!(load(&d).unwrap(), Some(u64::MAX));
        assert!(!d.join("hlculid.hwm.tmp").exists());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn damaged_files_are_reported() {
        let d = tempdir("bad");
        for s in [
            "",
            "hlculid-hwm 1 5 5\n",
            "garbage",
            "hlculid-hwm 1 5\n",
            &encode(7).replace('\n', ""),
        ] {
            fs::write(d.join(FILE_NAME), s).unwrap();
            assert!(matches!(load(&d), Err(LoadError::Corrupt(_))), "{s:?}");
        }
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn unreadable_directory_is_an_io_error() {
        let d = tempdir("io");
        fs::create_dir(d.join(FILE_NAME)).unwrap(); // a directory where the file should be
        assert!(matches!(load(&d), Err(LoadError::Io(_))));
        assert!(store(&d, 1).is_err());
        fs::remove_dir_all(&d).unwrap();
    }
}
