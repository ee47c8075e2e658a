//! `#[pg_test]`s: the Rust side of the datum glue, seen through SPI inside a running server
//! (configured by `crate::pg_test`: preloaded, publisher 42). The SQL surface as a whole is
//! covered by the pg_regress suite in tests/pg_regress.

#[pgrx::pg_schema]
mod tests {
    use crate::Hlculid;
    use hlculid_core::Id;
    use pgrx::prelude::*;

    const A1: &str = "017FC21C5E7A-0000-000A-AAA111111111";

    fn id(s: &str) -> Hlculid {
        Hlculid(hlculid_core::text::parse(s.as_bytes()).expect("valid test id"))
    }

    #[pg_test]
    fn datum_round_trips_through_spi() {
        let v = Spi::get_one::<Hlculid>(&format!("SELECT '{A1}'::hlculid")).unwrap();
        assert_eq!(v, Some(id(A1)));
        let back = Spi::get_one_with_args::<String>("SELECT $1::text", &[id(A1).into()]).unwrap();
        assert_eq!(back.as_deref(), Some(A1));
        let null = Spi::get_one::<Hlculid>("SELECT NULL::hlculid").unwrap();
        assert_eq!(null, None);
    }

    #[pg_test]
    fn arrays_unbox_every_element() {
        let arr = Spi::get_one::<Vec<Hlculid>>(
            "SELECT array_agg(hlculid_from_parts('2024-01-01+00', i, 1, i) ORDER BY i) FROM generate_series(0, 99) i",
        )
        .unwrap()
        .unwrap();
        assert_eq!(arr.len(), 100);
        for (i, v) in arr.iter().enumerate() {
            assert_eq!(v.0.counter(), i as u32);
            assert_eq!(v.0.random(), i as u64);
        }
        assert!(arr.windows(2).all(|w| w[0] < w[1]));
    }

    #[pg_test]
    fn unaligned_datums_read_correctly() {
        // A char before each id puts its bytes at odd offsets in the tuple (ALIGNMENT char).
        Spi::run("CREATE TABLE t_align (c \"char\", id hlculid, d \"char\", id2 hlculid)").unwrap();
        Spi::run(&format!(
            "INSERT INTO t_align VALUES ('x', '{A1}', 'y', 'FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFE')"
        ))
        .unwrap();
        let (a, b) = Spi::get_two::<Hlculid, Hlculid>("SELECT id, id2 FROM t_align").unwrap();
        assert_eq!(a, Some(id(A1)));
        assert_eq!(b.unwrap().0, Id::from_u128(u128::MAX - 1));
        let size = Spi::get_one::<i32>("SELECT pg_column_size(t_align.*) FROM t_align")
            .unwrap()
            .unwrap();
        assert_eq!(size, 24 + 1 + 16 + 1 + 16); // header + fields, no alignment padding
    }

    #[pg_test]
    fn generated_ids_increase_within_a_transaction() {
        let mut prev = Spi::get_one::<Hlculid>("SELECT hlculid_generate()")
            .unwrap()
            .unwrap();
        for _ in 0..1000 {
            let next = Spi::get_one::<Hlculid>("SELECT hlculid_generate()")
                .unwrap()
                .unwrap();
            assert!(next > prev);
            assert_eq!(next.0.publisher(), 42);
            prev = next;
        }
    }

    #[pg_test]
    fn sort_with_abbreviated_keys_matches_byte_order() {
        Spi::run(
            "CREATE TABLE t_sort AS SELECT uuid_send(gen_random_uuid())::hlculid AS id FROM generate_series(1, 20000)",
        )
        .unwrap();
        Spi::run("SET work_mem = '64MB'").unwrap();
        let sorted = Spi::get_one::<Vec<Hlculid>>("SELECT array_agg(id ORDER BY id) FROM t_sort")
            .unwrap()
            .unwrap();
        let mut by_bytes = sorted.clone();
        by_bytes.sort_by_key(|h| h.0 .0);
        assert_eq!(sorted, by_bytes);
        // And descending, which runs the comparators reversed.
        let desc =
            Spi::get_one::<Vec<Hlculid>>("SELECT array_agg(id ORDER BY id DESC) FROM t_sort")
                .unwrap()
                .unwrap();
        by_bytes.reverse();
        assert_eq!(desc, by_bytes);
    }

    #[pg_test]
    fn observe_then_generate_sorts_after_the_remote_id() {
        let remote = Spi::get_one::<Hlculid>(
            "SELECT hlculid_from_parts(clock_timestamp() + interval '200 milliseconds', 7, 1, 0)",
        )
        .unwrap()
        .unwrap();
        Spi::run_with_args("SELECT hlculid_observe($1)", &[remote.into()]).unwrap();
        let next = Spi::get_one::<Hlculid>("SELECT hlculid_generate()")
            .unwrap()
            .unwrap();
        assert!(next > remote);
    }

    #[pg_test(error = "invalid input syntax for type hlculid: \"zz\"")]
    fn bad_text_is_an_error() {
        Spi::run("SELECT 'zz'::hlculid").unwrap();
    }

    #[pg_test(error = "hlculid counter 70000 is out of range")]
    fn out_of_range_part_is_an_error() {
        Spi::run("SELECT hlculid_from_parts(now(), 70000, 0, 0)").unwrap();
    }

    /// The first table of docs/errors.md is the code's list, row for row: each row's SQLSTATE is
    /// the one its condition raises, and the rows PostgreSQL raises itself are raised by their
    /// statements.
    #[pg_test]
    fn the_errors_page_is_the_list_of_conditions() {
        use crate::base::errors::{CONDITIONS, RAISED_BY_POSTGRES};
        let page = include_str!("../docs/errors.md");
        let table = page
            .split("## Raised by the extension's code")
            .nth(1)
            .expect("docs/errors.md has the section of the code's conditions");
        let rows: Vec<&str> = table
            .lines()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .skip(2)
            .collect();
        let row =
            |sqlstate: &str, name: &str, when: &str| format!("| `{sqlstate}` {name} | {when} |");
        let by_postgres: Vec<String> = RAISED_BY_POSTGRES
            .iter()
            .map(|r| row(r.sqlstate, r.name, r.when))
            .collect();
        let ours: Vec<String> = CONDITIONS
            .iter()
            .map(|c| row(c.sqlstate, c.name, c.when))
            .collect();
        let (readme_by_postgres, readme_ours): (Vec<&str>, Vec<&str>) = rows
            .iter()
            .partition(|r| by_postgres.iter().any(|p| p == *r));
        assert_eq!(readme_ours, ours);
        assert_eq!(readme_by_postgres, by_postgres);
        for (i, c) in CONDITIONS.iter().enumerate() {
            assert_eq!(c.condition.row(), i, "{:?} is not at its row", c.condition);
            let code = c.condition.code() as i32;
            // PostgreSQL packs the five characters six bits each, first character lowest
            let text: String = (0..5)
                .map(|i| (((code >> (6 * i)) & 0x3F) as u8 + b'0') as char)
                .collect();
            assert_eq!(text, c.sqlstate, "{:?}", c.condition);
        }
        Spi::run(
            "CREATE FUNCTION pg_temp.sqlstate_of(q text) RETURNS text LANGUAGE plpgsql AS $$
             BEGIN EXECUTE q; RETURN 'no error'; EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE; END $$",
        )
        .unwrap();
        for r in RAISED_BY_POSTGRES {
            for statement in r.statements {
                let got = Spi::get_one_with_args::<String>(
                    "SELECT pg_temp.sqlstate_of($1)",
                    &[(*statement).into()],
                )
                .unwrap();
                assert_eq!(got.as_deref(), Some(r.sqlstate), "{statement}");
            }
        }
    }

    /// Called without an expression (as C code calls it, `OidFunctionCall`), hlculid_generate_n
    /// still builds an array of the extension's own type, whatever the caller's search_path holds.
    #[pg_test]
    fn generate_n_without_an_expression_ignores_the_search_path() {
        let (fn_oid, element) = Spi::get_two::<pg_sys::Oid, pg_sys::Oid>(
            "SELECT p.oid, t.typelem FROM pg_proc p JOIN pg_type t ON t.oid = p.prorettype
             WHERE p.proname = 'hlculid_generate_n'",
        )
        .unwrap();
        let (fn_oid, element) = (fn_oid.unwrap(), element.unwrap());
        Spi::run("CREATE SCHEMA decoy; CREATE DOMAIN decoy.hlculid AS int4; SET search_path = decoy, public")
            .unwrap();
        // SAFETY: a call of a valid function OID with the one int4 argument it is declared with;
        // it returns an array (a varlena), whose header is read without detoasting (a fresh
        // array is never toasted).
        let got = unsafe {
            let d =
                pg_sys::OidFunctionCall1Coll(fn_oid, pg_sys::InvalidOid, pg_sys::Datum::from(3i32));
            (*d.cast_mut_ptr::<pg_sys::ArrayType>()).elemtype
        };
        assert_eq!(got, element);
    }
}
