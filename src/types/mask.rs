//! Ids that can leave the database: `hlculid_mask(id) -> uuid` and `hlculid_unmask(uuid)`, a keyed
//! permutation of the whole 128-bit id (core's `mask`: Feistel over SipHash-2-4), and the same on
//! the positive 63-bit range for bigint ids.
//!
//! The keys live in a file, `hlculid.mask_key_file` (relative to the data directory, like
//! `ssl_key_file`): its first key is the current one, later ones are earlier keys the `_any`
//! lookups still try during a rotation. Not a setting holding the key itself: the postmaster logs
//! every changed setting's value at reload, and a SET would put it in a statement. The file is
//! read again when it changes (its size, modification time or inode; looked at once a second at
//! most); no message ever contains a key, only its line, length or the position of a wrong
//! character.

use crate::base::backend_local::BackendLocal;
use crate::base::errors::{Condition, UserError};
use crate::base::process;
use crate::base::settings;
use crate::types::bigint;
use crate::types::datum::Hlculid;
use hlculid_core::mask::{Mask, NotPositive};
use pgrx::prelude::*;
use pgrx::Uuid;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What identifies one version of the key file: path, inode, size, modification time (ns).
type Version = (PathBuf, u64, u64, i64);

/// The keys read last, the version of the file they came from, and when that was checked.
struct Cached {
    checked: Instant,
    version: Version,
    keys: Vec<Mask>,
}

/// How long keys read from the file are used before the file (and the setting naming it) is
/// looked at again: a stat per call would cost as much as the mask itself.
const RECHECK: Duration = Duration::from_secs(1);

static KEYS: BackendLocal<Option<Cached>> = BackendLocal::new(None);

fn missing() -> ! {
    if !process::preloaded() {
        UserError::new(
            Condition::NotPreloaded,
            "the mask functions need hlculid preloaded",
        )
        .detail("Their key file is named by hlculid.mask_key_file, a setting the preloaded library defines.")
        .hint("Add hlculid to shared_preload_libraries in postgresql.conf and restart the server.")
        .raise();
    }
    UserError::new(Condition::MaskKeyMissing, "hlculid.mask_key_file is not set")
        .detail("Masking and unmasking ids needs the server's mask key.")
        .hint("Write a key (32 hexadecimal digits: openssl rand -hex 16) into a file readable only by the server, and name it in hlculid.mask_key_file in postgresql.conf; reload. Keep it secret and backed up: links given out depend on it.")
        .raise()
}

fn unreadable(path: &std::path::Path, e: &std::io::Error) -> ! {
    UserError::new(
        Condition::MaskKeyMissing,
        format!(
            "could not read the mask key file \"{}\": {e}",
            path.display()
        ),
    )
    .hint("Check hlculid.mask_key_file and the file's owner and permissions.")
    .raise()
}

/// The keys of the file: one per line (blank lines and `#` comments skipped), current first.
fn read(path: &std::path::Path) -> Vec<Mask> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| unreadable(path, &e));
    let mut keys = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        keys.push(Mask::from_hex(line).unwrap_or_else(|e| {
            UserError::new(
                Condition::MaskKeyInvalid,
                format!(
                    "line {} of the mask key file \"{}\" is not a mask key",
                    n + 1,
                    path.display()
                ),
            )
            .detail(e.to_string())
            .hint("A key is 32 hexadecimal digits (16 random bytes): openssl rand -hex 16.")
            .raise()
        }));
    }
    if keys.is_empty() {
        UserError::new(
            Condition::MaskKeyMissing,
            format!("the mask key file \"{}\" holds no key", path.display()),
        )
        .hint("Write a key (32 hexadecimal digits: openssl rand -hex 16) on its first line.")
        .raise();
    }
    keys
}

/// Runs `f` on the file's keys (current first). The file is looked at again (its name, and whether
/// it changed) at most once a second, so a new key takes effect within a second.
fn with_keys<R>(f: impl FnOnce(&[Mask]) -> R) -> R {
    let now = Instant::now();
    // SAFETY: the backend's thread; `refresh`, `read` and `f` never reach KEYS.
    unsafe {
        KEYS.with(|cache| {
            if cache
                .as_ref()
                .is_none_or(|c| now.duration_since(c.checked) >= RECHECK)
            {
                let version = current_version();
                match cache {
                    Some(c) if c.version == version => c.checked = now,
                    _ => {
                        let keys = read(&version.0);
                        *cache = Some(Cached {
                            checked: now,
                            version,
                            keys,
                        });
                    }
                }
            }
            f(&cache.as_ref().expect("filled above").keys)
        })
    }
}

/// The key file's path and version now; raises when there is none to read.
fn current_version() -> Version {
    let Some(name) = settings::mask_key_file() else {
        missing()
    };
    let path = process::data_dir().join(name);
    let meta = std::fs::metadata(&path).unwrap_or_else(|e| unreadable(&path, &e));
    if meta.mode() & 0o007 != 0 {
        UserError::new(
            Condition::MaskKeyMissing,
            format!(
                "the mask key file \"{}\" can be read by every user of the machine",
                path.display()
            ),
        )
        .hint("Make it readable by the server's user only: chmod 600.")
        .raise();
    }
    let mtime = meta.mtime() * 1_000_000_000 + meta.mtime_nsec();
    (path, meta.ino(), meta.size(), mtime)
}

fn current<R>(f: impl FnOnce(&Mask) -> R) -> R {
    with_keys(|keys| f(&keys[0]))
}

fn positive(v: i64, r: Result<i64, NotPositive>) -> i64 {
    r.unwrap_or_else(|_| bigint::out_of_range(v, "A bigint id, masked or not, is 1 or more."))
}

/// The id as shown outside: a uuid that reveals nothing of the id without the key.
#[pg_extern(stable, parallel_safe, strict)]
fn hlculid_mask(id: Hlculid) -> Uuid {
    Uuid::from_bytes(current(|k| k.mask(id.0)))
}

/// The id a masked uuid stands for, under the current key.
#[pg_extern(stable, parallel_safe, strict)]
fn hlculid_unmask(masked: Uuid) -> Hlculid {
    Hlculid(current(|k| k.unmask(*masked.as_bytes())))
}

/// The ids a masked uuid stands for under every key of the file, current first:
/// `WHERE id IN (SELECT hlculid_unmask_any($1))` finds a link given out under any of them (a
/// wrong key gives an id no table holds).
#[pg_extern(stable, parallel_safe, strict)]
fn hlculid_unmask_any(masked: Uuid) -> SetOfIterator<'static, Hlculid> {
    let ids: Vec<Hlculid> = with_keys(|keys| {
        keys.iter()
            .map(|k| Hlculid(k.unmask(*masked.as_bytes())))
            .collect()
    });
    SetOfIterator::new(ids)
}

/// A bigint id as shown outside: a positive bigint that reveals nothing of the id.
#[pg_extern(stable, parallel_safe, strict)]
fn hlculid_mask_bigint(id: i64) -> i64 {
    positive(id, current(|k| k.mask_bigint(id)))
}

/// The bigint id a masked bigint stands for, under the current key.
#[pg_extern(stable, parallel_safe, strict)]
fn hlculid_unmask_bigint(masked: i64) -> i64 {
    positive(masked, current(|k| k.unmask_bigint(masked)))
}

/// [`hlculid_unmask_any`] for bigint ids.
#[pg_extern(stable, parallel_safe, strict)]
fn hlculid_unmask_bigint_any(masked: i64) -> SetOfIterator<'static, i64> {
    let ids: Vec<i64> = with_keys(|keys| {
        keys.iter()
            .map(|k| positive(masked, k.unmask_bigint(masked)))
            .collect()
    });
    SetOfIterator::new(ids)
}

extension_sql_file!(
    "../../sql/src/masks.sql",
    name = "hlculid_masks",
    requires = [
        hlculid_mask,
        hlculid_unmask,
        hlculid_unmask_any,
        hlculid_mask_bigint,
        hlculid_unmask_bigint,
        hlculid_unmask_bigint_any
    ],
);
