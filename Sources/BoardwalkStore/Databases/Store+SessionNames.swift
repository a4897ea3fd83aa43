import BoardwalkCodec
internal import CLMDB

// `session_names`: sessions by the name of their id and by the names of their events' profiles (docs/storage.md).
//
// The store keeps no string → id index (strings are appended in chunks, looked up by id), so a question about one
// session or one profile named by its string would otherwise walk the whole dictionary to find the id (69–108 ms
// at 2 M strings) and then, for a profile, every event. Here the key starts with a fixed 64-bit hash of the
// name's bytes: one seek finds the sessions, and the value's string id tells a true match from a collision.
//
// Hashes are random, so each new session's entries land on a random leaf: put in every batch, they rewrote most
// of the tree's leaves at each commit. Each batch's entries go to `session_names_log` instead, as one sorted value,
// and are folded into `session_names` every 16 batches (and by `foldLogs()`), like the event and session logs.

/// Keys and the hash of `session_names`.
enum SessionNames {
    /// hash of the name's UTF-8 bytes (8) ‖ role (1) ‖ session id (4).
    static let keySize = 13
    /// A `session_names_log` value holds entries of this size back to back, in key order: the key's 13 bytes and the
    /// name's string id (4).
    static let logEntrySize = 17
    /// The log is folded when it holds this many batches.
    static let logBatches = 16

    /// What the name is to the session (the key's ninth byte).
    enum Role: UInt8 {
        /// The session's own id.
        case session = 0
        /// A profile id that an event of the session carries.
        case profile = 1
    }

    /// FNV-1a over the bytes, then MurmurHash3's 64-bit finalizer (FNV's low bits mix poorly). Fixed, not seeded:
    /// it is part of the format. A collision costs a look at the colliding entry's string, never a wrong answer.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        h ^= h >> 33
        h = h &* 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        h = h &* 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return h
    }

    /// ``hash(_:)`` of a string's UTF-8 bytes.
    static func hash(_ name: String) -> UInt64 {
        name.withUTF8Bytes { hash($0) }
    }

    /// An entry: its key's fields and the value, the name's string id.
    struct Entry: Hashable, Comparable {
        var hash: UInt64
        var role: UInt8
        var session: UInt32
        var name: UInt32

        static func < (a: Entry, b: Entry) -> Bool {
            (a.hash, a.role, a.session) < (b.hash, b.role, b.session)
        }

        /// Writes the key into `key` (``keySize`` bytes).
        func storeKey(_ key: UnsafeMutableRawPointer) {
            key.storeBE(hash, at: 0)
            key.storeBytes(of: role, toByteOffset: 8, as: UInt8.self)
            key.storeBE(session, at: 9)
        }

        /// Writes the key and then the value into `bytes` (``logEntrySize`` bytes).
        func storeLogEntry(_ bytes: UnsafeMutableRawPointer) {
            storeKey(bytes)
            bytes.storeBE(name, at: SessionNames.keySize)
        }

        /// The entry at `offset` of a log value.
        init(log bytes: UnsafeRawBufferPointer, at offset: Int) {
            self.init(
                hash: bytes.be64(offset), role: bytes[offset + 8], session: bytes.be32(offset + 9),
                name: bytes.be32(offset + 13))
        }

        /// The entry of a stored key and value; `nil` when their sizes are wrong.
        init?(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
            guard key.count == SessionNames.keySize, value.count == 4 else { return nil }
            self.init(hash: key.be64(0), role: key[8], session: key.be32(9), name: value.be32(0))
        }

        init(hash: UInt64, role: UInt8, session: UInt32, name: UInt32) {
            self.hash = hash
            self.role = role
            self.session = session
            self.name = name
        }
    }
}

extension WriterState {
    /// The `session_names` entries of `requests` (role, name id, session id), their names hashed as `table` spells
    /// them: the session's own name when the batch met a (onboarding, session) pair the writer did not know, and
    /// each (profile, session) pair it did not know.
    static func sessionNameEntries(
        _ requests: [(role: UInt8, name: UInt32, session: UInt32)], table: StringTable
    ) throws -> [SessionNames.Entry] {
        try requests.map { request in
            guard let name = table.string(for: request.name) else {
                throw StoreError(.corrupt, "string id \(request.name) is not in the writer's dictionary")
            }
            return SessionNames.Entry(
                hash: SessionNames.hash(name), role: request.role, session: request.session, name: request.name)
        }
    }

    /// Logs the batch's `session_names` entries (first seq `firstSeq`) as one value of `session_names_log`, sorted,
    /// and folds the log when it holds ``SessionNames/logBatches`` batches.
    /// - Complexity: O(e log e) and one put; a fold every 16 batches.
    func writeSessionNames(_ txn: Transaction, _ entries: [SessionNames.Entry], firstSeq: UInt64) throws {
        guard !entries.isEmpty else { return }
        let entries = entries.sorted()
        var value = [UInt8](repeating: 0, count: entries.count * SessionNames.logEntrySize)
        var count = 0
        value.withUnsafeMutableBytes { v in
            for (i, entry) in entries.enumerated() where i == 0 || entries[i - 1] != entry {
                entry.storeLogEntry(v.baseAddress! + count * SessionNames.logEntrySize)
                count += 1
            }
        }
        scratch.storeBE(firstSeq, at: 0)
        try value.withUnsafeBytes { v in
            _ = try txn.put(
                dbs.sessionNamesLog, UnsafeRawBufferPointer(start: scratch, count: 8),
                UnsafeRawBufferPointer(rebasing: v[..<(count * SessionNames.logEntrySize)]))
        }
        if try txn.entries(dbs.sessionNamesLog) >= SessionNames.logBatches { try foldSessionNames(txn) }
    }

    /// Moves the entries of `session_names_log` into `session_names`, in key order, and empties the log. Entries are
    /// never changed once written, so one stored already (logged again for a pair the writer had forgotten) is left
    /// as it is (`MDB_NOOVERWRITE`).
    /// - Throws: ``StoreError/Kind/corrupt`` for a log value that is not whole entries.
    func foldSessionNames(_ txn: Transaction) throws {
        var entries: [SessionNames.Entry] = []
        try Snapshot.forEachLoggedName(txn, dbs) { entries.append($0) }
        guard !entries.isEmpty else { return }
        entries.sort()
        var value = [UInt8](repeating: 0, count: 4)
        for (i, entry) in entries.enumerated() where i == 0 || entries[i - 1] != entry {
            entry.storeKey(scratch)
            value.withUnsafeMutableBytes { $0.baseAddress!.storeBE(entry.name, at: 0) }
            try value.withUnsafeBytes { v in
                _ = try txn.put(
                    dbs.sessionNames, UnsafeRawBufferPointer(start: scratch, count: SessionNames.keySize), v,
                    flags: UInt32(MDB_NOOVERWRITE))
            }
        }
        try txn.empty(dbs.sessionNamesLog)
    }
}

extension Snapshot {
    /// The ids of the sessions whose own id is `name` (none or one), found through `session_names` without
    /// looking the string up in the dictionary.
    ///
    /// Names are compared byte for byte, as ``id(of:)`` compares them.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a malformed entry.
    /// - Complexity: O(log N): one seek, and a string look-up per entry with the same hash (one, barring collisions).
    public func sessionIDs(named name: String) throws -> [StringID] {
        try sessionIDs(name, role: .session)
    }

    /// The ids of the sessions with at least one event whose profile is `profile`, in id order, found through
    /// `session_names` without looking the string up in the dictionary or reading an event.
    ///
    /// A session whose events carry several profiles is listed under each. Names are compared byte for byte.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a malformed entry.
    /// - Complexity: O(log N + the profile's sessions).
    public func sessionIDs(ofProfile profile: String) throws -> [StringID] {
        try sessionIDs(profile, role: .profile)
    }

    private func sessionIDs(_ name: String, role: SessionNames.Role) throws -> [StringID] {
        let hash = SessionNames.hash(name)
        var prefix = [UInt8](repeating: 0, count: 9)
        prefix.withUnsafeMutableBytes { p in
            p.baseAddress!.storeBE(hash, at: 0)
            p[8] = role.rawValue
        }
        var out = Set<StringID>()
        // Entries of colliding names share the prefix; each name id is compared once.
        var verdicts: [StringID: Bool] = [:]
        func take(_ entry: SessionNames.Entry) {
            let matches: Bool
            if let known = verdicts[entry.name] {
                matches = known
            } else {
                matches = string(for: entry.name).map { $0.utf8.elementsEqual(name.utf8) } ?? false
                verdicts[entry.name] = matches
            }
            if matches { out.insert(entry.session) }
        }
        try txn.withCursor(dbs.sessionNames) { c in
            var found = try prefix.withUnsafeBytes { try c.seek($0) }
            while found, c.key.count >= 9, c.key.prefix(9).elementsEqual(prefix) {
                guard let entry = SessionNames.Entry(key: c.key, value: c.value) else {
                    throw StoreError(
                        .corrupt,
                        "a session_names entry has a \(c.key.count)-byte key and a \(c.value.count)-byte value")
                }
                take(entry)
                found = try c.next()
            }
        }
        // The batches not folded yet: a binary search in each one's sorted entries.
        try txn.withCursor(dbs.sessionNamesLog) { c in
            var found = try c.first()
            while found {
                let value = c.value
                guard value.count % SessionNames.logEntrySize == 0 else {
                    throw StoreError(.corrupt, "a session_names_log value of \(value.count) bytes is not whole entries")
                }
                let size = SessionNames.logEntrySize
                var (low, high) = (0, value.count / size)
                while low < high {
                    let mid = (low + high) / 2
                    let entry = SessionNames.Entry(log: value, at: mid * size)
                    if (entry.hash, entry.role) < (hash, role.rawValue) { low = mid + 1 } else { high = mid }
                }
                while low < value.count / size {
                    let entry = SessionNames.Entry(log: value, at: low * size)
                    guard entry.hash == hash, entry.role == role.rawValue else { break }
                    take(entry)
                    low += 1
                }
                found = try c.next()
            }
        }
        return out.sorted()
    }

    /// Calls `body` with every entry of `session_names_log`, batch by batch.
    /// - Throws: ``StoreError/Kind/corrupt`` for a value that is not whole entries.
    static func forEachLoggedName(
        _ txn: Transaction, _ dbs: Databases, _ body: (SessionNames.Entry) throws -> Void
    ) throws {
        try txn.withCursor(dbs.sessionNamesLog) { c in
            var found = try c.first()
            while found {
                let value = c.value
                guard c.key.count == 8, value.count % SessionNames.logEntrySize == 0 else {
                    throw StoreError(
                        .corrupt,
                        "a session_names_log entry has a \(c.key.count)-byte key and a \(value.count)-byte value")
                }
                for offset in stride(from: 0, to: value.count, by: SessionNames.logEntrySize) {
                    try body(SessionNames.Entry(log: value, at: offset))
                }
                found = try c.next()
            }
        }
    }

    /// `check()`: `session_names` and `session_names_log` hold exactly an entry for each session's own id (`sessions`)
    /// and for each (profile, session) pair of the events (`profilePairs`: profile << 32 | session), each under its
    /// name's hash (the log may repeat an entry the tree or another batch holds).
    func checkSessionNames(_ report: inout CheckReport, sessions: Set<UInt32>, profilePairs: Set<UInt64>) throws {
        var expected: [SessionNames.Entry: Bool] = [:]
        func expect(_ role: SessionNames.Role, name: UInt32, session: UInt32) {
            guard let string = string(for: name) else { return }  // checkStrings reports a missing string
            let entry = SessionNames.Entry(
                hash: SessionNames.hash(string), role: role.rawValue, session: session, name: name)
            expected[entry] = false
        }
        for session in sessions { expect(.session, name: session, session: session) }
        for pair in profilePairs {
            expect(.profile, name: UInt32(truncatingIfNeeded: pair >> 32), session: UInt32(truncatingIfNeeded: pair))
        }
        var problems = 0
        func add(_ problem: String) {
            problems += 1
            if problems <= 10 { report.add("session_names: " + problem) }
        }
        try txn.withCursor(dbs.sessionNames) { c in
            var found = try c.first()
            while found {
                if let entry = SessionNames.Entry(key: c.key, value: c.value) {
                    if expected[entry] == nil {
                        let what = entry.role == SessionNames.Role.session.rawValue ? "own id" : "profile"
                        add(
                            "an entry lists session \(entry.session) under string \(entry.name) as its \(what), "
                                + "which its events do not say")
                    } else {
                        expected[entry] = true
                    }
                } else {
                    add("an entry has a \(c.key.count)-byte key and a \(c.value.count)-byte value")
                }
                found = try c.next()
            }
        }
        do {
            try Snapshot.forEachLoggedName(txn, dbs) { entry in
                if expected[entry] == nil {
                    add(
                        "session_names_log: session \(entry.session) is logged under string \(entry.name), which its events do not say"
                    )
                } else {
                    expected[entry] = true
                }
            }
        } catch let error as StoreError where error.kind == .corrupt {
            add(error.description)
        }
        let missing = expected.values.count { !$0 }
        if missing > 0 { add("\(missing) sessions or (profile, session) pairs of the events have no entry") }
        if problems > 10 { report.add("session_names: \(problems) problems in all") }
    }
}
