// Peeks and one-profile / one-session reads: `boardwalk query` in process on the query benchmarks' store
// (QueryBench), beside SQLite answering the same questions on the same events, each with the index it needs.
//
// SQLite's table: the generated events with interned integer ids (onboarding, screen, time, seq, session, profile)
// and the codec's record body as a blob, `WITHOUT ROWID` primary key (onboarding, screen, time, seq), and indexes on
// (time, seq), (session, time, seq) and (profile, session). Its ids are looked up before timing and it returns
// rows, not rendered JSON: the comparison favours SQLite.
import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import CSQLite
import Foundation

/// The events of a ``QueryStore`` in SQLite, made once for the lookup benchmarks.
final class LookupTable {
    let store: QueryStore
    private(set) var db: OpaquePointer?
    private(set) var sessionID: Int64 = 0
    private(set) var profileID: Int64 = 0
    private var dir = ""

    init(store: QueryStore) { self.store = store }

    func make() throws {
        if db != nil { return }
        try store.make()
        dir = try scratchDirectory("lookup-sqlite")
        try check(sqlite3_open_v2(dir + "/events.sqlite", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil))
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=NORMAL")
        try exec(
            """
            CREATE TABLE events (
                onboarding INTEGER NOT NULL, screen INTEGER NOT NULL, time INTEGER NOT NULL, seq INTEGER NOT NULL,
                session INTEGER NOT NULL, profile INTEGER, value BLOB NOT NULL,
                PRIMARY KEY (onboarding, screen, time, seq)
            ) WITHOUT ROWID
            """)
        var insert: OpaquePointer?
        try check(sqlite3_prepare_v2(db, "INSERT INTO events VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", -1, &insert, nil))
        defer { sqlite3_finalize(insert) }
        var strings = StringTable()
        var encoder = RecordEncoder()
        var seq: Int64 = 0
        try exec("BEGIN")
        for event in store.generatedEvents() {
            encoder.removeAll()
            let record = try encoder.appendBody(event, strings: &strings)
            sqlite3_bind_int64(insert, 1, Int64(record.header.keyOnboarding))
            sqlite3_bind_int64(insert, 2, Int64(record.header.keyScreenIndex))
            sqlite3_bind_int64(insert, 3, event.time.microseconds)
            sqlite3_bind_int64(insert, 4, seq)
            sqlite3_bind_int64(insert, 5, Int64(record.session ?? RecordFormat.absent))
            if let profile = record.profile {
                sqlite3_bind_int64(insert, 6, Int64(profile))
            } else {
                sqlite3_bind_null(insert, 6)
            }
            try encoder.bytes.withUnsafeBytes { body in
                sqlite3_bind_blob(insert, 7, body.baseAddress, Int32(body.count), nil)
                let rc = sqlite3_step(insert)
                sqlite3_reset(insert)
                if rc != SQLITE_DONE { try check(rc) }
            }
            seq += 1
            if seq % 100_000 == 0 {
                try exec("COMMIT")
                try exec("BEGIN")
            }
        }
        try exec("COMMIT")
        try exec("CREATE INDEX events_by_time ON events (time, seq)")
        try exec("CREATE INDEX events_by_session ON events (session, time, seq)")
        try exec("CREATE INDEX events_by_profile ON events (profile, session)")
        try exec("ANALYZE")
        sessionID = Int64(strings.id(of: store.sampleSession) ?? RecordFormat.absent)
        profileID = Int64(strings.id(of: store.sampleProfile) ?? RecordFormat.absent)
    }

    func exec(_ sql: String) throws {
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        if rc != SQLITE_OK { throw BenchError("sqlite: \(sql): \(String(cString: sqlite3_errmsg(db)))") }
    }

    private func check(_ rc: Int32) throws {
        if rc != SQLITE_OK { throw BenchError("sqlite: \(String(cString: sqlite3_errmsg(db))) (\(rc))") }
    }

    /// Runs `sql` with `parameter` bound to ?1 (when given), summing what each row returns.
    func query(_ sql: String, _ parameter: Int64? = nil, each: (OpaquePointer) -> Void = { _ in }) throws -> UInt64 {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(db, sql, -1, &statement, nil))
        defer { sqlite3_finalize(statement) }
        if let parameter { sqlite3_bind_int64(statement, 1, parameter) }
        var sum: UInt64 = 0
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            if rc != SQLITE_ROW { try check(rc) }
            for column in 0..<sqlite3_column_count(statement) {
                sum &+=
                    UInt64(bitPattern: sqlite3_column_int64(statement, column))
                    &+ UInt64(sqlite3_column_bytes(statement, column))
            }
            each(statement!)
        }
        return sum
    }

    deinit {
        if db != nil { sqlite3_close_v2(db) }
        removeScratch(dir)
    }
}

/// One lookup question on SQLite.
final class SQLiteLookupBench: Benchmark {
    enum Question {
        /// The 5 earliest events.
        case firstEvents
        /// The 5 sessions that start first, each with all of its events.
        case firstSessions
        /// Every event of the sessions of one profile.
        case profileSessions
        /// Every event of one session.
        case sessionEvents
    }

    let table: LookupTable
    let question: Question

    init(table: LookupTable, question: Question) {
        self.table = table
        self.question = question
    }

    func setUp() throws { try table.make() }

    func run() throws -> UInt64 {
        switch question {
        case .firstEvents:
            return try table.query(
                "SELECT onboarding, screen, time, seq, session, value FROM events ORDER BY time, seq LIMIT 5")
        case .firstSessions:
            // The order an application would take: the time index until 5 distinct sessions, then each one's events.
            var sessions: [Int64] = []
            var statement: OpaquePointer?
            let walk = "SELECT session FROM events INDEXED BY events_by_time ORDER BY time, seq"
            guard sqlite3_prepare_v2(table.db, walk, -1, &statement, nil) == SQLITE_OK else {
                throw BenchError("sqlite: prepare")
            }
            while sessions.count < 5, sqlite3_step(statement) == SQLITE_ROW {
                // Events without a session id share the absent id here (SQLite infers no sessions): not a session.
                let session = sqlite3_column_int64(statement, 0)
                if session != Int64(RecordFormat.absent), !sessions.contains(session) { sessions.append(session) }
            }
            sqlite3_finalize(statement)
            var sum: UInt64 = 0
            for session in sessions {
                sum &+= try table.query(
                    "SELECT onboarding, screen, time, seq, value FROM events WHERE session = ?1 ORDER BY time, seq",
                    session)
            }
            return sum
        case .profileSessions:
            return try table.query(
                "SELECT session, onboarding, screen, time, seq, value FROM events WHERE session IN "
                    + "(SELECT session FROM events WHERE profile = ?1) ORDER BY session, time, seq", table.profileID)
        case .sessionEvents:
            return try table.query(
                "SELECT onboarding, screen, time, seq, value FROM events WHERE session = ?1 ORDER BY time, seq",
                table.sessionID)
        }
    }
}
