//! hlculid: a 128-bit id type for PostgreSQL that sorts in real event order across many
//! publishers. The pure logic lives in the `hlculid-core` crate; each module here adapts one
//! part of it to PostgreSQL.

mod datum;
mod errors;
mod extract;
mod io;
mod ops;

pub use datum::Hlculid;

pgrx::pg_module_magic!(name, version);

#[cfg(any(test, feature = "pg_test"))]
#[pgrx::pg_schema]
mod tests;

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![
            "shared_preload_libraries = 'hlculid'",
            "hlculid.publisher_id = 42",
        ]
    }
}
