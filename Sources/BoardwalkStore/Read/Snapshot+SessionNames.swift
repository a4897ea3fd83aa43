import BoardwalkCodec

extension Snapshot {
    /// The ids of the sessions whose own id is `name` (none or one), found through `session_names` without
    /// looking the string up in the dictionary.
    ///
    /// Names are compared byte for byte, as ``id(of:)`` compares them.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a damaged or malformed chunk of the index.
    /// - Complexity: O(r log N) for the index's r runs (at most about log2 of its entries): a seek in each, and a
    ///   string look-up per entry with the same hash (one, barring collisions).
    public func sessionIDs(named name: String) throws -> [StringID] {
        try sessionIDs(name, role: .session)
    }

    /// The ids of the sessions with at least one event whose profile is `profile`, in id order, found through
    /// `session_names` without looking the string up in the dictionary or reading an event.
    ///
    /// A session whose events carry several profiles is listed under each. Names are compared byte for byte.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a damaged or malformed chunk of the index.
    /// - Complexity: O(r log N + the profile's sessions) for the index's r runs.
    public func sessionIDs(ofProfile profile: String) throws -> [StringID] {
        try sessionIDs(profile, role: .profile)
    }

    /// Calls `body` with every entry of `session_names`, run by run: each session's own id (`profile` nil) and each
    /// profile its events carry, by id; stops when `body` returns false. An entry may come more than once (a
    /// session's own id is noted for each onboarding it has events in). No event and no string is read.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a damaged or malformed chunk of the index, and
    ///   what `body` throws.
    /// - Complexity: O(entries), 17 bytes each: about two per session.
    package func forEachSessionNameEntry(_ body: (_ session: StringID, _ profile: StringID?) throws -> Bool) throws {
        let profileRole = SessionNames.Role.profile.rawValue
        for run in try SessionNames.Directory.read(txn, dbs).runs {
            var start = [UInt8](repeating: 0, count: 8)
            start.withUnsafeMutableBytes { $0.baseAddress!.storeBE(run.id, at: 0) }
            let more = try txn.withCursor(dbs.sessionNames) { c in
                var found = try start.withUnsafeBytes { try c.seek($0) }
                while found, c.key.count >= 8, c.key.be64(0) == run.id {
                    let entries = try SessionNames.chunkEntries(key: c.key, value: c.value)
                    for offset in stride(from: 0, to: entries.count, by: SessionNames.entrySize) {
                        let entry = SessionNames.Entry(entries, at: offset)
                        guard try body(entry.session, entry.role == profileRole ? entry.name : nil) else {
                            return false
                        }
                    }
                    found = try c.next()
                }
                return true
            }
            guard more else { return }
        }
    }

    private func sessionIDs(_ name: String, role: SessionNames.Role) throws -> [StringID] {
        let hash = SessionNames.hash(name)
        var out = Set<StringID>()
        // Entries of colliding names share the hash; each name id is compared once.
        var verdicts: [StringID: Bool] = [:]
        var target = [UInt8](repeating: 0, count: SessionNames.chunkKeySize)
        for run in try SessionNames.Directory.read(txn, dbs).runs {
            target.withUnsafeMutableBytes { t in
                t.baseAddress!.storeBE(run.id, at: 0)
                t.baseAddress!.storeBE(hash, at: 8)
                t[16] = role.rawValue
            }
            try txn.withCursor(dbs.sessionNames) { c in
                // The first chunk whose last entry is at or after (hash, role): the one holding the first match.
                var found = try target.withUnsafeBytes { try c.seek($0) }
                while found, c.key.count >= 8, c.key.be64(0) == run.id {
                    let entries = try SessionNames.chunkEntries(key: c.key, value: c.value)
                    let size = SessionNames.entrySize
                    var (low, high) = (0, entries.count / size)
                    while low < high {
                        let mid = (low + high) / 2
                        let entry = SessionNames.Entry(entries, at: mid * size)
                        if (entry.hash, entry.role) < (hash, role.rawValue) { low = mid + 1 } else { high = mid }
                    }
                    while low < entries.count / size {
                        let entry = SessionNames.Entry(entries, at: low * size)
                        guard entry.hash == hash, entry.role == role.rawValue else { return }
                        let matches: Bool
                        if let known = verdicts[entry.name] {
                            matches = known
                        } else {
                            matches = string(for: entry.name).map { $0.utf8.elementsEqual(name.utf8) } ?? false
                            verdicts[entry.name] = matches
                        }
                        if matches { out.insert(entry.session) }
                        low += 1
                    }
                    // Every entry to the chunk's end matched: the next chunk may hold more.
                    found = try c.next()
                }
            }
        }
        return out.sorted()
    }
}
