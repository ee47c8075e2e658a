//! The holds' state files, `pg_hlculid/prepared.<full xid>` in the data directory, fsync'd
//! before PREPARE completes (as PostgreSQL keeps `pg_twophase/`), and 0.4.0's floor file.

use crate::base::errors::{Condition, UserError};
use crate::base::process;
use hlculid_core::mark::file as mark_file;
use pgrx::prelude::*;
use std::path::PathBuf;

/// The directory of the state files, in the data directory.
const DIR: &str = "pg_hlculid";
/// 0.4.0's floor file (the largest horizon returned), read once to carry its holds over.
const LEGACY_FLOOR_FILE: &str = "hlculid.horizon";

fn dir() -> PathBuf {
    process::data_dir().join(DIR)
}

fn file_name(full_xid: u64) -> String {
    format!("prepared.{full_xid:016X}")
}

/// The holds' files, as (full xid, lowest); damaged or foreign files are skipped with a LOG line
/// (a damaged file is one a crash interrupted before its PREPARE completed: its transaction
/// never prepared).
pub(super) fn read_files() -> Vec<(u64, u64)> {
    let Ok(entries) = std::fs::read_dir(dir()) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(xid) = name
            .strip_prefix("prepared.")
            .and_then(|x| u64::from_str_radix(x, 16).ok())
        else {
            continue;
        };
        match mark_file::load_named(&dir(), &name) {
            Ok(Some(lowest)) => found.push((xid, lowest)),
            other => {
                log!("hlculid: skipping the prepared-transaction hold file \"{name}\": {other:?}")
            }
        }
    }
    found
}

/// Makes a hold durable: its state file, fsync'd. Raises on failure (the PREPARE fails with it:
/// a hold that would not survive a restart is a row a reader could miss).
pub(super) fn write_file(full_xid: u64, lowest: u64) {
    let d = dir();
    let result = std::fs::create_dir_all(&d)
        .and_then(|()| mark_file::store_named(&d, &file_name(full_xid), lowest));
    if let Err(e) = result {
        UserError::new(
            Condition::MarkWriteFailed,
            format!(
                "hlculid could not write the horizon hold of the transaction being prepared: {e}"
            ),
        )
        .detail(format!("The file is {}.", d.join(file_name(full_xid)).display()))
        .hint("Free space or fix the permissions of the data directory, then prepare the transaction again.")
        .raise();
    }
}

pub(super) fn remove_file(full_xid: u64) {
    let _ = std::fs::remove_file(dir().join(file_name(full_xid)));
}

/// Whether 0.4.0's floor file is there (read in the postmaster at start).
pub(super) fn legacy_floor_exists() -> bool {
    process::data_dir().join(LEGACY_FLOOR_FILE).exists()
}

/// 0.4.0's floor: the largest horizon it returned (1 when the file cannot be read).
pub(super) fn legacy_floor() -> u64 {
    mark_file::load_named(&process::data_dir(), LEGACY_FLOOR_FILE)
        .ok()
        .flatten()
        .unwrap_or(1)
        .max(1)
}

/// Removes 0.4.0's floor file, once every prepared transaction it held has a hold of its own.
pub(super) fn remove_legacy_floor() {
    let _ = std::fs::remove_file(process::data_dir().join(LEGACY_FLOOR_FILE));
}
