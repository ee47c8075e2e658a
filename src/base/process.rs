//! This server process: whether the library was preloaded into it (the shared clock, the
//! horizon's slots and the settings exist), and its data directory, where the mark file, the
//! prepared transactions' hold files and the mask key file live.

use pgrx::prelude::*;
use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set in the postmaster while preloading; forked backends inherit it.
static PRELOADED: AtomicBool = AtomicBool::new(false);

/// The shared clock's set-up (src/clock/shared.rs) calls it, last, while preloading.
pub fn set_preloaded() {
    PRELOADED.store(true, Ordering::Relaxed);
}

pub fn preloaded() -> bool {
    PRELOADED.load(Ordering::Relaxed)
}

pub fn data_dir() -> PathBuf {
    // SAFETY: DataDir is a NUL-terminated path set at startup and never freed.
    unsafe {
        PathBuf::from(
            CStr::from_ptr(pg_sys::DataDir)
                .to_string_lossy()
                .into_owned(),
        )
    }
}
