// The raw-LMDB peer: an `mdb_put` loop writing the store's two databases with the same keys and values,
// durable commit per batch, and a full cursor scan. This file is the only code outside BoardwalkStore
// that touches LMDB: it measures what the store adds over LMDB itself.
import BoardwalkCodec
import BoardwalkStoreFormat
import CLMDB
import Foundation

/// A minimal LMDB environment for the peer; fails loudly on any error.
final class RawLMDB {
    var env: OpaquePointer?
    var events: MDB_dbi = 0
    var sessions: MDB_dbi = 0
    let path: String

    init(path: String, mapSize: Int = 8 << 30) throws {
        self.path = path
        try check(mdb_env_create(&env), "mdb_env_create")
        try check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
        try check(mdb_env_set_maxdbs(env, 4), "mdb_env_set_maxdbs")
        // Default flags: a commit flushes data and meta page (two fsyncs), as a durable store does.
        try check(mdb_env_open(env, path, 0, 0o644), "mdb_env_open")
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        try check(mdb_dbi_open(txn, "events", UInt32(MDB_CREATE), &events), "mdb_dbi_open events")
        try check(mdb_dbi_open(txn, "sessions", UInt32(MDB_CREATE), &sessions), "mdb_dbi_open sessions")
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    func close() {
        if env != nil { mdb_env_close(env) }
        env = nil
    }

    deinit { close() }

    /// Writes every row to both databases in transactions of `batch` rows, committing each batch.
    ///
    /// - Parameter sorted: `false` puts rows in arrival order with `mdb_put` (the plain loop); `true`
    ///   sorts each batch by key first, inside the timed work, and puts through a cursor, so consecutive
    ///   puts land on the same leaf pages (what the store does).
    func append(_ rows: Rows, batch: Int, sorted: Bool) throws -> UInt64 {
        var written: UInt64 = 0
        var order: [Int] = []
        order.reserveCapacity(batch)
        try rows.eventKeys.withUnsafeBytes { eventKeys in
            try rows.sessionKeys.withUnsafeBytes { sessionKeys in
                try rows.values.withUnsafeBytes { values in
                    var start = 0
                    while start < rows.count {
                        let end = min(start + batch, rows.count)
                        var txn: OpaquePointer?
                        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
                        do {
                            order.removeAll(keepingCapacity: true)
                            order.append(contentsOf: start..<end)
                            if sorted {
                                order.sort { a, b in
                                    (rows.onboarding[a], rows.screen[a], rows.time[a], rows.seq[a])
                                        < (rows.onboarding[b], rows.screen[b], rows.time[b], rows.seq[b])
                                }
                            }
                            try put(txn, events, order, sorted: sorted) { i in
                                (
                                    MDB_val(
                                        mv_size: Rows.eventKeySize, mv_data: mutable(eventKeys, i * Rows.eventKeySize)),
                                    MDB_val(
                                        mv_size: rows.valueOffsets[i + 1] - rows.valueOffsets[i],
                                        mv_data: mutable(values, rows.valueOffsets[i]))
                                )
                            }
                            if sorted {
                                order.sort { a, b in
                                    (rows.session[a], rows.time[a], rows.seq[a]) < (
                                        rows.session[b], rows.time[b], rows.seq[b]
                                    )
                                }
                            }
                            try put(txn, sessions, order, sorted: sorted) { i in
                                (
                                    MDB_val(
                                        mv_size: Rows.sessionKeySize,
                                        mv_data: mutable(sessionKeys, i * Rows.sessionKeySize)),
                                    // The session index's value is (onboarding, screen): the event key's first 6 bytes.
                                    MDB_val(
                                        mv_size: Rows.sessionValueSize,
                                        mv_data: mutable(eventKeys, i * Rows.eventKeySize))
                                )
                            }
                        } catch {
                            mdb_txn_abort(txn)
                            throw error
                        }
                        try check(mdb_txn_commit(txn), "mdb_txn_commit")
                        written &+= UInt64(rows.valueOffsets[end] - rows.valueOffsets[start])
                        start = end
                    }
                }
            }
        }
        return written
    }

    private func put(
        _ txn: OpaquePointer?, _ dbi: MDB_dbi, _ order: [Int], sorted: Bool, _ row: (Int) -> (MDB_val, MDB_val)
    ) throws {
        if sorted {
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            for i in order {
                var (key, value) = row(i)
                try check(mdb_cursor_put(cursor, &key, &value, 0), "mdb_cursor_put")
            }
        } else {
            for i in order {
                var (key, value) = row(i)
                try check(mdb_put(txn, dbi, &key, &value, 0), "mdb_put")
            }
        }
    }

    /// Reads every key and value of the events database in key order.
    func scan() throws -> (count: Int, checksum: UInt64) {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        defer { mdb_txn_abort(txn) }
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, events, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var count = 0
        var sum: UInt64 = 0
        var op = MDB_FIRST
        while mdb_cursor_get(cursor, &key, &value, op) == 0 {
            op = MDB_NEXT
            count += 1
            // Touch the key's last byte and the value's first, as a decoder would start to.
            sum &+= UInt64(key.mv_data.load(fromByteOffset: key.mv_size - 1, as: UInt8.self))
            if value.mv_size > 0 { sum &+= UInt64(value.mv_data.load(as: UInt8.self)) }
            sum &+= UInt64(value.mv_size)
        }
        return (count, sum)
    }
}

@inline(__always)
private func mutable(_ buffer: UnsafeRawBufferPointer, _ offset: Int) -> UnsafeMutableRawPointer {
    // LMDB takes `void *` but does not write through a key or value given to a put.
    UnsafeMutableRawPointer(mutating: buffer.baseAddress! + offset)
}

private func check(_ rc: Int32, _ what: String) throws {
    if rc != 0 { throw BenchError("\(what): \(String(cString: mdb_strerror(rc))) (\(rc))") }
}

/// Append with both indexes, durable commit per batch, through raw `mdb_put`.
final class RawLMDBAppendBench: Benchmark {
    let rows: () throws -> Rows
    let batch: Int
    let label: String
    let sorted: Bool
    private var loaded: Rows?
    private var db: RawLMDB?
    private var dir = ""
    private var bytesOnDisk = 0

    init(label: String, batch: Int, sorted: Bool, rows: @escaping () throws -> Rows) {
        self.label = label
        self.batch = batch
        self.sorted = sorted
        self.rows = rows
    }

    func setUp() throws { loaded = try rows() }

    func prepareRun() throws {
        dir = try scratchDirectory("raw-lmdb-\(label)")
        db = try RawLMDB(path: dir)
    }

    func run() throws -> UInt64 { try db!.append(loaded!, batch: batch, sorted: sorted) }

    func finishRun() throws {
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

/// A full scan of the events database, key order, through a raw cursor.
final class RawLMDBScanBench: Benchmark {
    let rows: () throws -> Rows
    private var db: RawLMDB?
    private var dir = ""

    init(rows: @escaping () throws -> Rows) { self.rows = rows }

    func setUp() throws {
        dir = try scratchDirectory("raw-lmdb-scan")
        db = try RawLMDB(path: dir)
        _ = try db!.append(try rows(), batch: 10_000, sorted: true)
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

// MARK: The raw peer of the block layout

/// The values of a block layout for each batch (docs/storage.md): `events` blocks, `sessions` bucket values and
/// `batches` entries, built before timing with the codec's builders (one block per run of (onboarding, screen) in
/// the batch, split at an hour's span or 32 KiB; one value per bucket of 64 session ids and batch, split past 768
/// bytes; 256 block keys per `batches` entry). The timed loop only puts them.
///
/// A simpler layout than the store's, kept as a bound rather than a copy of what the store writes: every batch
/// puts new values and rewrites none. The store grows each group's newest block instead (fewer, larger blocks for
/// reads, paid for by rewriting them), and appends the session index to a log folded every 16 batches; with
/// 100 000 sessions in flight those rewrites are most of its bytes per commit. It
/// also leaves out what the store writes that has no per-event equivalent in the other peers: new strings,
/// `onboarding_sessions` pairs, counters.
struct BlockRows {
    enum Target: UInt8 { case events, sessions, batches }
    struct Put {
        var target: Target
        var key: Range<Int>
        var value: Range<Int>
    }

    var bytes: [UInt8] = []
    var puts: [Put] = []
    /// Where each batch's puts end in `puts`.
    var batchEnds: [Int] = []
    var events = 0

    // Blocks of one group and batch, never grown (the store grows a group's newest block across batches, which a
    // prebuilt put loop cannot model): the peer measures LMDB's cost for per-batch blocks.
    static let blockSpan: Int64 = 3_600_000_000
    static let maxBlockBytes = 32 << 10
    static let batchChunk = 256
    static let sessionValueTarget = 768

    init(_ rows: Rows, batch: Int) {
        events = rows.count
        var blocks = EventBlockBuilder()
        var buckets = SessionBucketBuilder(prefixRoom: 0)
        var start = 0
        while start < rows.count {
            let end = min(start + batch, rows.count)
            var order = Array(start..<end)
            order.sort { a, b in
                (rows.onboarding[a], rows.screen[a], rows.time[a], rows.seq[a]) < (
                    rows.onboarding[b], rows.screen[b], rows.time[b], rows.seq[b]
                )
            }
            var blockKeys: [UInt8] = []
            var open = false
            var head = 0
            func flushBlock() {
                let key = bytes.count
                appendBigEndian(&bytes, rows.onboarding[head])
                appendBigEndian(&bytes, rows.screen[head])
                appendBigEndian(&bytes, UInt64(bitPattern: rows.time[head]) ^ (1 << 63))
                appendBigEndian(&bytes, rows.seq[head])
                blockKeys.append(contentsOf: bytes[key..<bytes.count])
                let value = bytes.count
                let seed = bytes[key..<value].withUnsafeBytes { keyBytes in
                    var crc = CRC32C()
                    crc.update(keyBytes)
                    return crc
                }
                blocks.withBlock(checksumSeed: seed) { bytes.append(contentsOf: $0) }
                puts.append(Put(target: .events, key: key..<value, value: value..<bytes.count))
                open = false
            }
            rows.values.withUnsafeBytes { values in
                for i in order {
                    if open
                        && (rows.onboarding[i] != rows.onboarding[head] || rows.screen[i] != rows.screen[head]
                            || rows.time[i] - rows.time[head] >= BlockRows.blockSpan
                            || blocks.byteCount >= BlockRows.maxBlockBytes)
                    {
                        flushBlock()
                    }
                    if !open {
                        head = i
                        blocks.start(time: rows.time[i], seq: rows.seq[i])
                        open = true
                    }
                    blocks.append(
                        time: rows.time[i], seq: rows.seq[i],
                        body: UnsafeRawBufferPointer(rebasing: values[rows.valueOffsets[i]..<rows.valueOffsets[i + 1]]))
                }
            }
            if open { flushBlock() }
            order.sort { a, b in
                (rows.session[a], rows.time[a], rows.seq[a]) < (rows.session[b], rows.time[b], rows.seq[b])
            }
            // The session index: per bucket of 64 session ids, one value of the batch's references (the
            // store also grows a bucket's newest value across batches, which a prebuilt put loop cannot model).
            var bucket: UInt32 = 0
            open = false
            func flushBucket() {
                let key = bytes.count
                appendBigEndian(&bytes, bucket)
                appendBigEndian(&bytes, buckets.baseSeq)
                let value = bytes.count
                buckets.withValue(keySeq: buckets.baseSeq) { bytes.append(contentsOf: $0) }
                puts.append(Put(target: .sessions, key: key..<value, value: value..<bytes.count))
                open = false
            }
            for i in order {
                if open && (rows.session[i] >> 6 != bucket || buckets.byteCount >= BlockRows.sessionValueTarget) {
                    flushBucket()
                }
                if !open {
                    bucket = rows.session[i] >> 6
                    buckets.reset()
                    open = true
                }
                buckets.append(
                    low: rows.session[i] & 63, onboarding: rows.onboarding[i], screen: rows.screen[i],
                    time: rows.time[i], seq: rows.seq[i])
            }
            if open { flushBucket() }
            var chunk: UInt16 = 0
            var k = 0
            while k < blockKeys.count {
                let n = min(BlockRows.batchChunk * 22, blockKeys.count - k)
                let key = bytes.count
                appendBigEndian(&bytes, rows.seq[start])
                appendBigEndian(&bytes, chunk)
                let value = bytes.count
                appendBigEndian(&bytes, UInt32(end - start))
                bytes.append(contentsOf: blockKeys[k..<k + n])
                puts.append(Put(target: .batches, key: key..<value, value: value..<bytes.count))
                chunk += 1
                k += n
            }
            batchEnds.append(puts.count)
            start = end
        }
    }
}

/// Append of the store's block layout through raw cursor puts, durable commit per batch.
final class RawBlocksAppendBench: Benchmark {
    let rows: () throws -> Rows
    let batch: Int
    let label: String
    private var loaded: BlockRows?
    private var env: OpaquePointer?
    private var dbis: [MDB_dbi] = []
    private var dir = ""
    private var bytesOnDisk = 0

    init(label: String, batch: Int, rows: @escaping () throws -> Rows) {
        self.label = label
        self.batch = batch
        self.rows = rows
    }

    func setUp() throws { loaded = BlockRows(try rows(), batch: batch) }

    func prepareRun() throws {
        dir = try scratchDirectory("raw-blocks-\(label)")
        try check(mdb_env_create(&env), "mdb_env_create")
        try check(mdb_env_set_mapsize(env, 8 << 30), "mdb_env_set_mapsize")
        try check(mdb_env_set_maxdbs(env, 4), "mdb_env_set_maxdbs")
        try check(mdb_env_open(env, dir, 0, 0o644), "mdb_env_open")
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        dbis = []
        for name in ["events", "sessions", "batches"] {
            var dbi: MDB_dbi = 0
            try check(mdb_dbi_open(txn, name, UInt32(MDB_CREATE), &dbi), "mdb_dbi_open \(name)")
            dbis.append(dbi)
        }
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    func run() throws -> UInt64 {
        let rows = loaded!
        var written: UInt64 = 0
        try rows.bytes.withUnsafeBytes { bytes in
            var first = 0
            for end in rows.batchEnds {
                var txn: OpaquePointer?
                try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
                var cursors: [OpaquePointer?] = [nil, nil, nil]
                do {
                    for i in 0..<3 { try check(mdb_cursor_open(txn, dbis[i], &cursors[i]), "mdb_cursor_open") }
                    for p in rows.puts[first..<end] {
                        var key = MDB_val(mv_size: p.key.count, mv_data: mutable(bytes, p.key.lowerBound))
                        var value = MDB_val(mv_size: p.value.count, mv_data: mutable(bytes, p.value.lowerBound))
                        let flags = p.target == .batches ? UInt32(MDB_APPEND) : 0
                        try check(
                            mdb_cursor_put(cursors[Int(p.target.rawValue)], &key, &value, flags), "mdb_cursor_put")
                        written &+= UInt64(p.value.count)
                    }
                } catch {
                    mdb_txn_abort(txn)
                    throw error
                }
                for c in cursors { mdb_cursor_close(c) }
                try check(mdb_txn_commit(txn), "mdb_txn_commit")
                first = end
            }
        }
        return written
    }

    func finishRun() throws {
        if env != nil { mdb_env_close(env) }
        env = nil
        bytesOnDisk = allocatedDiskBytes(dir)
        removeScratch(dir)
    }

    func extraFigures() -> [Figure] {
        [
            Figure(
                name: "bytes on disk per event", value: Double(bytesOnDisk) / Double(max(1, loaded?.events ?? 1)),
                unit: "B")
        ]
    }

    func tearDown() throws { loaded = nil }
}
