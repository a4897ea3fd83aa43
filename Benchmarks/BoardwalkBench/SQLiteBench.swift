// The SQLite peer (Debian's libsqlite3): the same rows, a `WITHOUT ROWID` primary key (onboarding, screen,
// time, seq), an index on (session, time), WAL with `synchronous=NORMAL`, one prepared insert, the same
// batch per transaction.
//
// Durability differs and favours SQLite: in WAL mode with synchronous=NORMAL a commit does not fsync (only
// checkpoints do), so a power cut may lose the last commits; LMDB's default commit fsyncs. This is the
// configuration the anchors in docs/performance.md were measured with.
import CSQLite
import Foundation

final class SQLiteDB {
    var db: OpaquePointer?
    private var insert: OpaquePointer?
    let path: String

    init(path: String) throws {
        self.path = path
        try check(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil), "sqlite3_open_v2")
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=NORMAL")
        try exec(
            """
            CREATE TABLE IF NOT EXISTS events (
                onboarding INTEGER NOT NULL, screen INTEGER NOT NULL, time INTEGER NOT NULL, seq INTEGER NOT NULL,
                session INTEGER NOT NULL, value BLOB NOT NULL,
                PRIMARY KEY (onboarding, screen, time, seq)
            ) WITHOUT ROWID
            """)
        try exec("CREATE INDEX IF NOT EXISTS events_by_session ON events (session, time)")
        try check(
            sqlite3_prepare_v2(db, "INSERT INTO events VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &insert, nil),
            "sqlite3_prepare_v2")
    }

    func close() {
        if insert != nil { sqlite3_finalize(insert) }
        insert = nil
        if db != nil { sqlite3_close_v2(db) }
        db = nil
    }

    deinit { close() }

    func exec(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "?"
            sqlite3_free(message)
            throw BenchError("sqlite: \(sql): \(text)")
        }
    }

    /// Inserts every row, `batch` per transaction.
    func append(_ rows: Rows, batch: Int) throws -> UInt64 {
        var written: UInt64 = 0
        try rows.values.withUnsafeBytes { values in
            var start = 0
            while start < rows.count {
                let end = min(start + batch, rows.count)
                try exec("BEGIN")
                for i in start..<end {
                    sqlite3_bind_int64(insert, 1, Int64(rows.onboarding[i]))
                    sqlite3_bind_int64(insert, 2, Int64(rows.screen[i]))
                    sqlite3_bind_int64(insert, 3, rows.time[i])
                    sqlite3_bind_int64(insert, 4, Int64(rows.seq[i]))
                    sqlite3_bind_int64(insert, 5, Int64(rows.session[i]))
                    let vStart = rows.valueOffsets[i]
                    let length = rows.valueOffsets[i + 1] - vStart
                    // nil destructor = SQLITE_STATIC: the bytes outlive the step.
                    sqlite3_bind_blob(insert, 6, values.baseAddress! + vStart, Int32(length), nil)
                    let rc = sqlite3_step(insert)
                    sqlite3_reset(insert)
                    if rc != SQLITE_DONE {
                        try? exec("ROLLBACK")
                        try check(rc, "sqlite3_step insert")
                    }
                    written &+= UInt64(length)
                }
                try exec("COMMIT")
                start = end
            }
        }
        return written
    }

    /// Reads every row in primary-key order.
    func scan() throws -> (count: Int, checksum: UInt64) {
        var statement: OpaquePointer?
        try check(
            sqlite3_prepare_v2(db, "SELECT onboarding, screen, time, seq, value FROM events", -1, &statement, nil),
            "sqlite3_prepare_v2")
        defer { sqlite3_finalize(statement) }
        var count = 0
        var sum: UInt64 = 0
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            if rc != SQLITE_ROW { try check(rc, "sqlite3_step select") }
            count += 1
            sum &+= UInt64(bitPattern: sqlite3_column_int64(statement, 3))
            let length = Int(sqlite3_column_bytes(statement, 4))
            if length > 0, let blob = sqlite3_column_blob(statement, 4) {
                sum &+= UInt64(blob.load(as: UInt8.self))
            }
            sum &+= UInt64(length)
        }
        return (count, sum)
    }

    private func check(_ rc: Int32, _ what: String) throws {
        if rc != SQLITE_OK {
            let text = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            throw BenchError("\(what): \(text) (\(rc))")
        }
    }
}

/// Append with the primary key and the session index, a transaction per batch.
final class SQLiteAppendBench: Benchmark {
    let rows: () throws -> Rows
    let batch: Int
    let label: String
    private var loaded: Rows?
    private var db: SQLiteDB?
    private var dir = ""
    private var bytesOnDisk = 0

    init(label: String, batch: Int, rows: @escaping () throws -> Rows) {
        self.label = label
        self.batch = batch
        self.rows = rows
    }

    func setUp() throws { loaded = try rows() }

    func prepareRun() throws {
        dir = try scratchDirectory("sqlite-\(label)")
        db = try SQLiteDB(path: dir + "/events.sqlite")
    }

    func run() throws -> UInt64 { try db!.append(loaded!, batch: batch) }

    func finishRun() throws {
        // Closing checkpoints the WAL into the database file (untimed), so the size is the table's.
        db?.close()
        db = nil
        bytesOnDisk = allocatedDiskBytes(dir)
        removeScratch(dir)
    }

    func extraFigures() -> [Figure] {
        [
            Figure(
                name: "bytes on disk per event", value: Double(bytesOnDisk) / Double(max(1, loaded?.count ?? 1)),
                unit: "B")
        ]
    }

    func tearDown() throws { loaded = nil }
}

/// A full scan of the table in primary-key order.
final class SQLiteScanBench: Benchmark {
    let rows: () throws -> Rows
    private var db: SQLiteDB?
    private var dir = ""

    init(rows: @escaping () throws -> Rows) { self.rows = rows }

    func setUp() throws {
        dir = try scratchDirectory("sqlite-scan")
        db = try SQLiteDB(path: dir + "/events.sqlite")
        _ = try db!.append(try rows(), batch: 10_000)
    }

    func run() throws -> UInt64 {
        let (count, sum) = try db!.scan()
        return sum &+ UInt64(count)
    }

    func tearDown() throws {
        db?.close()
        db = nil
        removeScratch(dir)
    }
}
