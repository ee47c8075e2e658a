// The JDBC recipes and the Java client (clients/java/Hlculid.java) checked against a server with
// hlculid: pgjdbc (Debian's /usr/share/java/postgresql.jar) and the plain JDK
// (tests/clients/test_java.py compiles both files with javac and runs this one).
// Usage: java -cp postgresql.jar:CLASSES HlculidJdbc jdbc:postgresql://127.0.0.1:PORT/postgres?user=postgres
// Prints "jdbc recipe: ok" at the end; any failed check exits 1 with what differed.

import java.security.SecureRandom;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.regex.Pattern;

public final class HlculidJdbc {
    static final int N = 10_000;
    static final int SERVER_PUBLISHER = 50; // hlculid.publisher_id of the test server
    static final Pattern CANONICAL = Pattern.compile("[0-9A-F]{12}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}");
    static final SecureRandom RANDOM = new SecureRandom();

    // -- checks ---------------------------------------------------------------------------------

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static void checkEq(Object expected, Object actual, String what) {
        if (!Objects.equals(expected, actual)) {
            throw new AssertionError(what + ": expected " + brief(expected) + ", got " + brief(actual));
        }
    }

    static String brief(Object o) {
        if (o instanceof List<?> l && l.size() > 4) {
            return "[" + l.size() + " items: " + l.get(0) + ", " + l.get(1) + ", ..., " + l.get(l.size() - 1) + "]";
        }
        return String.valueOf(o);
    }

    /** Runs body, which must fail with SQLSTATE state. */
    static void checkFails(String state, String what, SqlBody body) {
        try {
            body.run();
        } catch (SQLException e) {
            checkEq(state, e.getSQLState(), what + " (" + e.getMessage() + ")");
            return;
        }
        throw new AssertionError(what + ": expected SQLSTATE " + state + ", it worked");
    }

    interface SqlBody {
        void run() throws SQLException;
    }

    static List<String> strings(PreparedStatement ps) throws SQLException {
        List<String> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    static long count(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Client-made ids: one per (ms, counter), 100 a millisecond from start, increasing. */
    static List<UUID> clientIds(long startMs, int publisher) {
        List<UUID> ids = new ArrayList<>(N);
        for (int i = 0; i < N; i++) {
            ids.add(Hlculid.id(startMs + i / 100, i % 100, publisher, RANDOM.nextLong() & 0xFFFF_FFFF_FFFFL));
        }
        return ids;
    }

    // -- the recipe -------------------------------------------------------------------------------

    public static void main(String[] args) throws Exception {
        String url = args[0];
        try (Connection c = DriverManager.getConnection(url);
             Connection untyped = DriverManager.getConnection(url + "&stringtype=unspecified")) {
            run(c, untyped);
        } catch (AssertionError | Exception e) {
            System.err.println("jdbc recipe FAILED: " + e);
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof SQLException s && s.getNextException() != null) {
                    System.err.println("  next: " + s.getNextException());
                }
            }
            e.printStackTrace();
            System.exit(1);
        }
        System.out.println("jdbc recipe: ok");
    }

    static void run(Connection c, Connection untyped) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS jdbc_events");
            st.execute("CREATE TABLE jdbc_events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), "
                    + "n int NOT NULL, src text NOT NULL)");
        }
        Instant now = Instant.now();
        // Client ids in two minute-apart bands (100 a ms, 100 ms each), both before the server's.
        List<UUID> viaString = clientIds(Hlculid.ms(now.minusSeconds(600)), 51);
        List<UUID> viaUuid = clientIds(Hlculid.ms(now.minusSeconds(300)), 52);

        // 1. setString batch: pgjdbc sends varchar, which the assignment cast reads as an hlculid
        c.setAutoCommit(false);
        try (PreparedStatement ps = c.prepareStatement(
                "INSERT INTO jdbc_events (id, n, src) VALUES (?, ?, 'string')")) {
            for (int i = 0; i < N; i++) {
                ps.setString(1, Hlculid.text(viaString.get(i)));
                ps.setInt(2, i);
                ps.addBatch();
            }
            checkEq(N, ps.executeBatch().length, "setString batch");
        }
        // 2. setObject(UUID) batch: sent as uuid, the implicit cast makes it an hlculid
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO jdbc_events (id, n, src) VALUES (?, ?, 'uuid')")) {
            for (int i = 0; i < N; i++) {
                ps.setObject(1, viaUuid.get(i));
                ps.setInt(2, i);
                ps.addBatch();
            }
            checkEq(N, ps.executeBatch().length, "setObject(UUID) batch");
        }
        // 3. server-default ids, read back as generated keys (getString: the canonical text)
        Instant before = Instant.now();
        List<String> serverIds = new ArrayList<>(N);
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO jdbc_events (n, src) VALUES (?, 'server')",
                new String[] {"id"})) {
            for (int i = 0; i < N; i++) {
                ps.setInt(1, i);
                ps.addBatch();
            }
            checkEq(N, ps.executeBatch().length, "server-default batch");
            try (ResultSet keys = ps.getGeneratedKeys()) {
                while (keys.next()) {
                    serverIds.add(keys.getString(1));
                }
            }
        }
        c.commit();
        c.setAutoCommit(true);
        Instant after = Instant.now();
        checkEq(N, serverIds.size(), "generated keys");

        // Read back every band in key order: getString and getObject(UUID) of id::uuid agree, and
        // the server's fields of each id are the ones the client put in its bytes.
        List<String> expectString = viaString.stream().map(Hlculid::text).toList();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT id, id::uuid AS u, n, hlculid_publisher(id), hlculid_counter(id), "
                        + "(extract(epoch FROM hlculid_ts(id)) * 1000)::int8, hlculid_random(id) "
                        + "FROM jdbc_events WHERE src = ? ORDER BY id")) {
            for (String src : new String[] {"string", "uuid", "server"}) {
                ps.setString(1, src);
                List<String> texts = new ArrayList<>();
                List<UUID> uuids = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        String s = rs.getString(1);
                        UUID u = rs.getObject(2, UUID.class);
                        long hi = u.getMostSignificantBits(), lo = u.getLeastSignificantBits();
                        // one test per row, the message only on failure
                        if (!CANONICAL.matcher(s).matches() || !s.equals(Hlculid.text(u)) || rs.getInt(3) != texts.size()
                                || rs.getInt(4) != (int) (lo >>> 48) || rs.getInt(5) != (int) (hi & 0xFFFF)
                                || rs.getLong(6) != hi >>> 16 || rs.getLong(7) != (lo & 0xFFFF_FFFF_FFFFL)) {
                            throw new AssertionError(String.format(
                                    "%s row %d: text %s, id::uuid %s (as an id %s), n %d, "
                                            + "server's publisher %d counter %d ms %d random %d",
                                    src, texts.size(), s, u, Hlculid.text(u), rs.getInt(3), rs.getInt(4), rs.getInt(5),
                                    rs.getLong(6), rs.getLong(7)));
                        }
                        texts.add(s);
                        uuids.add(u);
                    }
                }
                switch (src) {
                    case "string" -> checkEq(expectString, texts, "setString ids read back in order");
                    case "uuid" -> checkEq(viaUuid, uuids, "setObject(UUID) ids read back in order");
                    default -> {
                        checkEq(serverIds, texts, "server ids: generated keys, in key order");
                        for (UUID u : uuids) {
                            checkEq(SERVER_PUBLISHER, (int) (u.getLeastSignificantBits() >>> 48), "server publisher");
                            long ms = u.getMostSignificantBits() >>> 16;
                            check(ms >= before.toEpochMilli() - 1000 && ms <= after.toEpochMilli() + 1000,
                                    "server id time " + ms + " outside the batch's time");
                        }
                    }
                }
            }
        }

        // Ordering: the server's key order is the canonical strings' order (String.compareTo)
        List<String> all = new ArrayList<>(expectString);
        viaUuid.forEach(u -> all.add(Hlculid.text(u)));
        all.addAll(serverIds);
        try (PreparedStatement ps = c.prepareStatement("SELECT id FROM jdbc_events ORDER BY id")) {
            checkEq(all, strings(ps), "ORDER BY id, all bands");
        }
        checkEq(all, all.stream().sorted().toList(), "canonical strings sort like the ids");
        uuidCompareToIsNotIdOrder(c);

        timeWindows(c, untyped, viaString, before, after, serverIds);
        equality(c, untyped, viaUuid.get(1234), 1234);
        varcharParameterComparisonIsRefused(c, expectString.get(1));
        randomUuidIsRefused(c);
        bigintIds(c);
    }

    /** java.util.UUID.compareTo compares signed longs: from publisher 32768 it disagrees with
     * the ids' order. Sort canonical strings (or compare with Long.compareUnsigned) instead. */
    static void uuidCompareToIsNotIdOrder(Connection c) throws SQLException {
        UUID low = Hlculid.id(1_700_000_000_000L, 0, 1, 0), high = Hlculid.id(1_700_000_000_000L, 0, 0x8000, 0);
        try (PreparedStatement ps = c.prepareStatement("SELECT ?::hlculid < ?::hlculid")) {
            ps.setString(1, Hlculid.text(low));
            ps.setString(2, Hlculid.text(high));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                check(rs.getBoolean(1), "the server orders publisher 1 before 32768");
            }
        }
        check(Hlculid.text(low).compareTo(Hlculid.text(high)) < 0, "canonical strings order publisher 1 first");
        check(low.compareTo(high) > 0, "UUID.compareTo puts publisher 32768 first (signed)");
    }

    static void timeWindows(Connection c, Connection untyped, List<UUID> band, Instant before, Instant after,
            List<String> serverIds) throws SQLException {
        // Milliseconds 20 to 49 of the setString band: exactly its ids 2000-4999.
        long start = band.get(0).getMostSignificantBits() >>> 16;
        // (Microsecond times, as timestamptz holds them: pgjdbc rounds an Instant's nanoseconds to
        // microseconds, so .999_999_5 would reach the server as the next millisecond.)
        Instant t1 = Instant.ofEpochMilli(start + 20).plusNanos(345_000);
        Instant t2 = Instant.ofEpochMilli(start + 49).plusNanos(999_000);
        List<String> expect = band.subList(2000, 5000).stream().map(Hlculid::text).toList();

        // bounds computed in Java, equal to the server's hlculid_min/hlculid_max
        String lo = Hlculid.minOf(t1), hi = Hlculid.maxOf(t2);
        try (PreparedStatement ps = c.prepareStatement("SELECT hlculid_min(?)::text, hlculid_max(?)::text")) {
            ps.setObject(1, OffsetDateTime.ofInstant(t1, ZoneOffset.UTC));
            ps.setObject(2, OffsetDateTime.ofInstant(t2, ZoneOffset.UTC));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                checkEq(rs.getString(1), lo, "Hlculid.minOf(t1) is hlculid_min(t1)");
                checkEq(rs.getString(2), hi, "Hlculid.maxOf(t2) is hlculid_max(t2)");
            }
        }
        String window = "SELECT id FROM jdbc_events WHERE id BETWEEN ?::hlculid AND ?::hlculid ORDER BY id";
        try (PreparedStatement ps = c.prepareStatement(window)) {
            ps.setString(1, lo);
            ps.setString(2, hi);
            checkEq(expect, strings(ps), "window with bounds from Java");
            // the server-made ids: exactly the ones made between before and after
            ps.setString(1, Hlculid.minOf(before.minusSeconds(1)));
            ps.setString(2, Hlculid.maxOf(after.plusSeconds(1)));
            checkEq(serverIds, strings(ps), "window over the server ids");
            // a window of one millisecond: its 100 ids
            ps.setString(1, Hlculid.minOf(t1));
            ps.setString(2, Hlculid.maxOf(t1));
            checkEq(expect.subList(0, 100), strings(ps), "one-millisecond window");
        }
        // bounds from the server: SELECT hlculid_min(?), hlculid_max(?) read with getString
        String slo, shi;
        try (PreparedStatement ps = c.prepareStatement("SELECT hlculid_min(?), hlculid_max(?)")) {
            ps.setObject(1, OffsetDateTime.ofInstant(t1, ZoneOffset.UTC));
            ps.setObject(2, OffsetDateTime.ofInstant(t2, ZoneOffset.UTC));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                slo = rs.getString(1);
                shi = rs.getString(2);
            }
        }
        try (PreparedStatement ps = c.prepareStatement(window)) {
            ps.setString(1, slo);
            ps.setString(2, shi);
            checkEq(expect, strings(ps), "window with bounds from hlculid_min/hlculid_max");
        }
        // with stringtype=unspecified the strings are untyped and need no cast
        try (PreparedStatement ps = untyped.prepareStatement(
                "SELECT id FROM jdbc_events WHERE id BETWEEN ? AND ? ORDER BY id")) {
            ps.setString(1, lo);
            ps.setString(2, hi);
            checkEq(expect, strings(ps), "window, stringtype=unspecified");
        }
        // the recipe: id <@ tstzrange(?, ?), timestamptz parameters, estimated by the planner; an
        // id's time is its millisecond's start, so [start + 20 ms, t2] holds milliseconds 20 to 49
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT id::text FROM jdbc_events WHERE id <@ tstzrange(?, ?, '[]') ORDER BY id")) {
            ps.setObject(1, OffsetDateTime.ofInstant(Instant.ofEpochMilli(start + 20), ZoneOffset.UTC));
            ps.setObject(2, OffsetDateTime.ofInstant(t2, ZoneOffset.UTC));
            checkEq(expect, strings(ps), "window as id <@ tstzrange");
            ps.setObject(1, OffsetDateTime.ofInstant(t1, ZoneOffset.UTC));
            checkEq(expect.subList(100, 3000), strings(ps), "a window from mid-millisecond leaves that millisecond out");
        }
        // Java's bounds refuse the times an id cannot hold, as the server does (22008)
        for (Instant bad : new Instant[] {Instant.parse("1969-12-31T23:59:59.999Z"), Instant.ofEpochMilli(1L << 48)}) {
            try {
                Hlculid.minOf(bad);
                throw new AssertionError("minOf(" + bad + ") should be refused");
            } catch (IllegalArgumentException expected) {
                // refused
            }
        }
    }

    static void equality(Connection c, Connection untyped, UUID u, int n) throws SQLException {
        String s = Hlculid.text(u);
        // a string parameter with a cast: the canonical text, and UUID.toString()'s form
        for (String form : new String[] {s, s.toLowerCase(), u.toString()}) {
            try (PreparedStatement ps = c.prepareStatement("SELECT n FROM jdbc_events WHERE id = ?::hlculid")) {
                ps.setString(1, form);
                checkEq(List.of(String.valueOf(n)), strings(ps), "id = ?::hlculid with " + form);
            }
        }
        // stringtype=unspecified: setString is untyped, id = ? reads it as an hlculid
        try (PreparedStatement ps = untyped.prepareStatement("SELECT n FROM jdbc_events WHERE id = ?")) {
            ps.setString(1, s);
            checkEq(List.of(String.valueOf(n)), strings(ps), "id = ? with stringtype=unspecified");
        }
        // a UUID parameter compares through the implicit uuid cast
        try (PreparedStatement ps = c.prepareStatement("SELECT n FROM jdbc_events WHERE id = ?")) {
            ps.setObject(1, u);
            checkEq(List.of(String.valueOf(n)), strings(ps), "id = ? with setObject(UUID)");
        }
    }

    /** Today hlculid has no operators with text/varchar (README "Ids as string parameters"), so a
     * varchar parameter (setString on a default connection) is refused in a comparison with 42883.
     * If such operators are ever added, this is the one check to flip. */
    static void varcharParameterComparisonIsRefused(Connection c, String s) throws SQLException {
        checkFails("42883", "id = ? with setString on a default connection", () -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT n FROM jdbc_events WHERE id = ?")) {
                ps.setString(1, s);
                strings(ps);
            }
        });
    }

    /** A random UUID (version 4) is not an id: the uuid cast refuses it (22023, 0.3.0). */
    static void randomUuidIsRefused(Connection c) throws SQLException {
        UUID v4;
        do {
            v4 = UUID.randomUUID();
        } while (v4.version() != 4);
        UUID random = v4;
        checkFails("22023", "setObject(UUID.randomUUID()) into an hlculid column", () -> {
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO jdbc_events (id, n, src) VALUES (?, 0, 'v4')")) {
                ps.setObject(1, random);
                ps.executeUpdate();
            }
        });
    }

    /** bigint ids are longs: [0][42-bit ms][11-bit counter][10-bit publisher]. */
    static void bigintIds(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS jdbc_orders");
            st.execute("CREATE TABLE jdbc_orders (id bigint PRIMARY KEY DEFAULT hlculid_generate_bigint(), "
                    + "n int NOT NULL)");
        }
        Instant before = Instant.now();
        List<Long> ids = new ArrayList<>(N);
        c.setAutoCommit(false);
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO jdbc_orders (n) VALUES (?)", new String[] {"id"})) {
            for (int i = 0; i < N; i++) {
                ps.setInt(1, i);
                ps.addBatch();
            }
            ps.executeBatch();
            try (ResultSet keys = ps.getGeneratedKeys()) {
                while (keys.next()) {
                    ids.add(keys.getLong(1));
                }
            }
        }
        c.commit();
        c.setAutoCommit(true);
        Instant after = Instant.now();
        checkEq(N, ids.size(), "bigint generated keys");
        check(ids.equals(ids.stream().sorted().toList()), "bigint ids increase in insert order");
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT id, n, hlculid_bigint_publisher(id), hlculid_bigint_counter(id), "
                        + "(extract(epoch FROM hlculid_bigint_ts(id)) * 1000)::int8 FROM jdbc_orders ORDER BY id");
             ResultSet rs = ps.executeQuery()) {
            int i = 0;
            while (rs.next()) {
                long id = rs.getLong(1);
                if (id != ids.get(i) || rs.getInt(2) != i || rs.getInt(3) != (int) (id & 0x3FF)
                        || rs.getInt(3) != SERVER_PUBLISHER || rs.getInt(4) != (int) (id >>> 10 & 0x7FF)
                        || rs.getLong(5) != id >>> 21) {
                    throw new AssertionError(String.format(
                            "bigint row %d: id %d (key %d), n %d, server's publisher %d counter %d ms %d",
                            i, id, ids.get(i), rs.getInt(2), rs.getInt(3), rs.getInt(4), rs.getLong(5)));
                }
                i++;
            }
            checkEq(N, i, "bigint rows");
        }
        // equality and a time window with setLong; bounds as hlculid_bigint_min/max: ms << 21
        try (PreparedStatement ps = c.prepareStatement("SELECT n FROM jdbc_orders WHERE id = ?")) {
            ps.setLong(1, ids.get(777));
            checkEq(List.of("777"), strings(ps), "bigint id = ? with setLong");
        }
        long lo = Hlculid.bigintMinOf(before.minusSeconds(1)), hi = Hlculid.bigintMaxOf(after.plusSeconds(1));
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT hlculid_bigint_min(?), hlculid_bigint_max(?), count(*) FROM jdbc_orders "
                        + "WHERE id BETWEEN ? AND ?")) {
            ps.setObject(1, OffsetDateTime.ofInstant(before.minusSeconds(1), ZoneOffset.UTC));
            ps.setObject(2, OffsetDateTime.ofInstant(after.plusSeconds(1), ZoneOffset.UTC));
            ps.setLong(3, lo);
            ps.setLong(4, hi);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                checkEq(lo, rs.getLong(1), "bigint min bound");
                checkEq(hi, rs.getLong(2), "bigint max bound");
                checkEq((long) N, rs.getLong(3), "bigint window");
            }
        }
        // a bigint id holds times to 2109-05-15 (the server's 22008 beyond)
        try {
            Hlculid.bigintMinOf(Instant.ofEpochMilli(1L << 42));
            throw new AssertionError("bigintMinOf(2109-05-15T07:35:11.104Z) should be refused");
        } catch (IllegalArgumentException expected) {
            // refused
        }
    }
}
