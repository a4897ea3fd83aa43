import BoardwalkCodec
import BoardwalkStoreFormat
internal import CLMDB

extension WriterState {
    /// The `session_names` entries of `requests` (role, name id, session id), with the hashes `table` keeps of
    /// their names: the session's own name when the batch met a (onboarding, session) pair the writer did not
    /// know, and each (profile, session) pair it did not know.
    static func sessionNameEntries(
        _ requests: [(role: UInt8, name: UInt32, session: UInt32)], table: StringTable
    ) throws -> [SessionNames.Entry] {
        try requests.map { request in
            guard let hash = table.storedHash(of: request.name) else {
                throw StoreError(.corrupt, "string id \(request.name) is not in the writer's dictionary")
            }
            return SessionNames.Entry(hash: hash, role: request.role, session: request.session, name: request.name)
        }
    }

    /// Adds the batch's `session_names` entries as the newest run, merged with the newest stored runs that are
    /// smaller than twice what the merge holds so far (a binary counter's carries), so that each run is at least
    /// twice the size of the next newer one.
    /// - Complexity: O(e) for the batch's e entries (a radix sort), plus the merged runs' entries, read and written once:
    ///   amortized O(log(entries / e)) copies of each entry over the store's life.
    func writeSessionNames(_ txn: Transaction, _ entries: [SessionNames.Entry]) throws {
        guard !entries.isEmpty else { return }
        // By the hash's top 33 bits (a radix sort of three passes: a comparison sort cost about 450 instructions an
        // entry), then the few entries sharing them (a profile's sessions, rare collisions) put in order by an
        // insertion sort, which costs a comparison an entry where nothing moves.
        var fresh = WriterState.radixSorted(entries) { $0.hash >> 31 }
        for i in fresh.indices.dropFirst() {
            var j = i
            while j > 0, fresh[j] < fresh[j - 1] {
                fresh.swapAt(j, j - 1)
                j -= 1
            }
        }
        fresh.removeDuplicatesOfSorted()
        var directory = try SessionNames.Directory.read(txn, dbs)
        var total = fresh.count
        var first = directory.runs.count
        while first > 0, Int(directory.runs[first - 1].count) < 2 * total {
            first -= 1
            total += Int(directory.runs[first].count)
        }
        let merged = Array(directory.runs[first...])
        let count = try withUnsafeTemporaryAllocation(
            byteCount: StoredChecksum.size + SessionNames.chunkEntries * SessionNames.entrySize, alignment: 8
        ) { buffer in
            var out = RunWriter(id: directory.nextRun, buffer: buffer, txn: txn, db: dbs.sessionNames)
            let sources = try merged.map { try StoredRunReader(run: $0.id, txn: txn, db: dbs.sessionNames) }
            var next = 0
            var last: SessionNames.Entry? = nil
            while true {
                // The smallest head among the stored runs and the batch's entries (few runs: a linear scan).
                var best: SessionNames.Entry? = next < fresh.count ? fresh[next] : nil
                var from = -1
                for (i, source) in sources.enumerated() {
                    if let head = source.head, best.map({ head < $0 }) ?? true { (best, from) = (head, i) }
                }
                guard let entry = best else { break }
                if from < 0 { next += 1 } else { try sources[from].advance() }
                if entry != last { try out.append(entry) }
                last = entry
            }
            try out.finish()
            return out.count
        }
        for run in merged { try deleteRun(run.id, txn) }
        directory.runs.removeSubrange(first...)
        directory.runs.append(SessionNames.Run(id: directory.nextRun, count: UInt32(count)))
        directory.nextRun += 1
        try directory.write(txn, dbs)
    }

    /// Deletes the chunks of run `id`.
    private func deleteRun(_ id: UInt64, _ txn: Transaction) throws {
        var prefix = [UInt8](repeating: 0, count: 8)
        prefix.withUnsafeMutableBytes { $0.baseAddress!.storeBE(id, at: 0) }
        try txn.withCursor(dbs.sessionNames) { c in
            while try prefix.withUnsafeBytes({ try c.seek($0) }), c.key.count >= 8, c.key.be64(0) == id {
                try c.delete()
            }
        }
    }
}

/// Writes a run's entries in chunks of ``SessionNames/chunkEntries``, each appended (`MDB_APPEND`: the run's id is
/// larger than every stored one) and sealed.
private struct RunWriter {
    let id: UInt64
    /// Room for a checksum and ``SessionNames/chunkEntries`` entries.
    let buffer: UnsafeMutableRawBufferPointer
    var inChunk = 0
    private(set) var count = 0

    // The transaction and database, not `Databases`: a struct of 312 bytes, copied at every call that took it.
    let txn: Transaction
    let db: Database

    init(id: UInt64, buffer: UnsafeMutableRawBufferPointer, txn: Transaction, db: Database) {
        precondition(buffer.count >= StoredChecksum.size + SessionNames.chunkEntries * SessionNames.entrySize)
        self.id = id
        self.buffer = buffer
        self.txn = txn
        self.db = db
    }

    mutating func append(_ entry: SessionNames.Entry) throws {
        entry.store(buffer.baseAddress! + StoredChecksum.size + inChunk * SessionNames.entrySize)
        inChunk += 1
        count += 1
        if inChunk == SessionNames.chunkEntries { try finish() }
    }

    /// Stores the entries not stored yet as a chunk.
    mutating func finish() throws {
        guard inChunk > 0 else { return }
        let size = StoredChecksum.size + inChunk * SessionNames.entrySize
        var key = [UInt8](repeating: 0, count: SessionNames.chunkKeySize)
        key.withUnsafeMutableBytes { k in
            k.baseAddress!.storeBE(id, at: 0)
            (k.baseAddress! + 8).copyMemory(
                from: buffer.baseAddress! + size - SessionNames.entrySize, byteCount: SessionNames.entrySize)
        }
        let value = UnsafeMutableRawBufferPointer(rebasing: buffer[..<size])
        StoredChecksum.seal(value, seed: key.withUnsafeBytes { CRC32C($0) })
        let appended = try key.withUnsafeBytes { k in
            try txn.put(db, k, UnsafeRawBufferPointer(value), flags: UInt32(MDB_APPEND))
        }
        guard appended else {
            throw StoreError(
                .corrupt, "session_names: a stored key sorts after run \(id), which the directory says is new")
        }
        inChunk = 0
    }
}

/// Reads a stored run in entry order, a chunk at a time: each chunk is copied out of the map, so the writes of the
/// merge (which may move the pages holding small chunks) never pull it from under the reader. A class: the merge
/// loop reads each reader's head once per entry, and a struct holding two arrays was copied to be read.
private final class StoredRunReader {
    let run: UInt64
    private var chunk: [UInt8] = []
    private var key: [UInt8]
    private var offset = 0
    private(set) var head: SessionNames.Entry?

    let txn: Transaction
    let db: Database

    init(run: UInt64, txn: Transaction, db: Database) throws {
        self.run = run
        self.txn = txn
        self.db = db
        key = [UInt8](repeating: 0, count: SessionNames.chunkKeySize)
        key.withUnsafeMutableBytes { $0.baseAddress!.storeBE(run, at: 0) }
        try load(after: false)
    }

    func advance() throws {
        offset += SessionNames.entrySize
        if offset < chunk.count {
            head = chunk.withUnsafeBytes { SessionNames.Entry($0, at: offset) }
        } else {
            try load(after: true)
        }
    }

    /// Loads the chunk at `key` (or, with `after`, the one following it) if it belongs to the run.
    private func load(after: Bool) throws {
        let run = self.run
        let loaded: ([UInt8], [UInt8])? = try txn.withCursor(db) { c in
            var found = try key.withUnsafeBytes { try c.seek($0) }
            if found, after, c.key.elementsEqual(key) { found = try c.next() }
            guard found, c.key.count >= 8, c.key.be64(0) == run else { return nil }
            let entries = try SessionNames.chunkEntries(key: c.key, value: c.value)
            return (Array(c.key), Array(entries))
        }
        guard let (key, chunk) = loaded else {
            head = nil
            return
        }
        (self.key, self.chunk, offset) = (key, chunk, 0)
        head = chunk.withUnsafeBytes { SessionNames.Entry($0, at: 0) }
    }
}

extension Array where Element: Equatable {
    /// Removes each element equal to the one before it.
    fileprivate mutating func removeDuplicatesOfSorted() {
        guard count > 1 else { return }
        var kept = 1
        for i in 1..<count where self[i] != self[kept - 1] {
            self[kept] = self[i]
            kept += 1
        }
        removeSubrange(kept...)
    }
}
