// hlculid ids in Java: the plain JDK, for use with pgjdbc (or any JDBC driver). One file, no
// dependencies: copy it into your sources (add your package line). Ids are canonical strings
// (012345678ABC-0001-000A-AAA333333333) or java.util.UUIDs of the same 16 bytes; bigint ids are
// longs. docs/clients.md ("Java (JDBC)") has the JDBC recipes; tests/clients/java/HlculidJdbc.java
// checks every method here and every recipe against a server (tests/clients/test_java.py).

import java.time.Instant;
import java.util.UUID;

/** Ids of the hlculid PostgreSQL extension: text form, fields and time-window bounds. */
public final class Hlculid {
    private Hlculid() {
    }

    /** The canonical text of the id with these 16 bytes: 48-bit ms, counter, publisher, random. */
    public static String text(UUID u) {
        long hi = u.getMostSignificantBits(), lo = u.getLeastSignificantBits();
        return String.format("%012X-%04X-%04X-%012X", hi >>> 16, hi & 0xFFFF, lo >>> 48, lo & 0xFFFF_FFFF_FFFFL);
    }

    /** An id from its fields (ms since 1970, 16-bit counter, 16-bit publisher, 48 random bits). */
    public static UUID id(long ms, int counter, int publisher, long random) {
        return new UUID(ms << 16 | counter, (long) publisher << 48 | random);
    }

    /** The millisecond containing t, as an id holds it; refuses the times an id cannot hold (the server's 22008). */
    public static long ms(Instant t) {
        long ms = t.toEpochMilli(); // floors: the millisecond containing t
        if (ms < 0 || ms >= 1L << 48) {
            throw new IllegalArgumentException("an hlculid holds times from 1970 to 10889-08-02: " + t);
        }
        return ms;
    }

    /** The smallest id of the millisecond containing t, as hlculid_min(t): the time, then zeros. */
    public static String minOf(Instant t) {
        return String.format("%012X-0000-0000-000000000000", ms(t));
    }

    /** The largest id of the millisecond containing t, as hlculid_max(t): the time, then ones. */
    public static String maxOf(Instant t) {
        return String.format("%012X-FFFF-FFFF-FFFFFFFFFFFF", ms(t));
    }

    /** The smallest bigint id of the millisecond containing t, as hlculid_bigint_min(t): ms << 21. */
    public static long bigintMinOf(Instant t) {
        return bigintMs(t) << 21;
    }

    /** The largest bigint id of the millisecond containing t, as hlculid_bigint_max(t). */
    public static long bigintMaxOf(Instant t) {
        return bigintMs(t) << 21 | 0x1FFFFF;
    }

    private static long bigintMs(Instant t) {
        long ms = ms(t);
        if (ms >= 1L << 42) {
            throw new IllegalArgumentException("a bigint id holds times from 1970 to 2109-05-15: " + t);
        }
        return ms;
    }
}
