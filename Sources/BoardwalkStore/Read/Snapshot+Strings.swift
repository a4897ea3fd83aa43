import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

extension Snapshot {
    /// The string with id `id`, or `nil` if there is none (or it cannot be read).
    /// - Complexity: O(1) from the table shared by the store's snapshots (``id(of:)``), which many lookups load;
    ///   until then (and in a write transaction) O(log strings) to find the string's chunk and a walk of at most
    ///   one chunk (``Layout/stringChunkTarget`` bytes). One `String` allocation for 16 bytes or more.
    public func string(for id: StringID) -> String? {
        guard id < stringCount else { return nil }
        if let cached = cache.string(for: id, txn: txn, dbs: dbs, limit: stringCount) { return cached }
        var result: String? = nil
        try? StringChunks.forEach(in: txn, dbs, from: id) { found, entry in
            if found == id { result = entry.string }
            return false
        }
        return result
    }

    /// The strings of `ids`, which must be ascending, distinct and below the snapshot's string count: for many ids
    /// at once, read in one pass over the chunks that hold them (a wanted id far past the last one seeks its chunk
    /// rather than reading the chunks between), with no `String` made for an id not asked for and the table
    /// ``id(of:)`` loads left unloaded (it hashes every string of the store).
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when a chunk does not decode or an id is not
    ///   stored; ``StoreError/Kind/invalidArgument`` when `ids` are not ascending.
    /// - Complexity: O(bytes of the chunks holding `ids` + gaps × log chunks); one `String` allocation per string of 16
    ///   bytes or more.
    package func strings(for ids: [StringID]) throws -> [String] {
        for i in ids.indices.dropFirst() where ids[i] <= ids[i - 1] {
            throw StoreError(.invalidArgument, "string ids are not ascending at \(ids[i]) after \(ids[i - 1])")
        }
        if let last = ids.last, last >= stringCount {
            throw StoreError(.corrupt, "string id \(last) is past the \(stringCount) strings of the store")
        }
        if let loaded = cache.loadedStrings(for: ids) { return loaded }
        var strings: [String] = []
        strings.reserveCapacity(ids.count)
        var next = 0
        while next < ids.count {
            let start = ids[next], before = next
            try StringChunks.forEach(in: txn, dbs, from: start) { id, entry in
                guard id == ids[next] else { return ids[next] > id && ids[next] - id <= Snapshot.stringSeekDistance }
                strings.append(entry.string)
                next += 1
                guard next < ids.count else { return false }
                return ids[next] - id <= Snapshot.stringSeekDistance
            }
            if next == before {
                throw StoreError(.corrupt, "string id \(start) is not in the strings database")
            }
        }
        return strings
    }

    /// How far past the last string read ``strings(for:)`` reads on rather than seeking: about eight chunks of
    /// ``Layout/stringChunkTarget`` bytes of session ids (a choice, not a measured break-even).
    static let stringSeekDistance: StringID = 256

    /// `error` with the onboarding of the block or record it is about named by its id (``StoreError/naming(_:)``), for
    /// messages read by people: `onboarding "onb_1", screen 5` rather than the store's number for the onboarding.
    func naming(_ error: StoreError) -> StoreError { error.naming { string(for: $0) } }

    /// The same for any error: a ``StoreError`` named, any other unchanged.
    func naming(_ error: any Error) -> any Error {
        guard let error = error as? StoreError else { return error }
        return naming(error)
    }

    /// The string count of a store whose last chunk cannot be read: that of the last well-formed chunk (stepping
    /// back over malformed keys), or its first id when its count does not decode, or 0. `check()` reports the damage.
    static func fallbackStringCount(_ txn: Transaction, _ dbs: Databases) throws -> UInt32 {
        try txn.withCursor(dbs.strings) { c in
            var found = try c.last()
            while found && c.key.count != 4 { found = try c.previous() }
            guard found else { return 0 }
            let first = c.key.be32(0)
            guard
                let count = try? StringChunkReader(c.value, checksumSeed: StringChunks.checksumSeed(first: first))
                    .count,
                UInt64(first) + UInt64(count) <= UInt64(RecordFormat.absent)
            else { return first }
            return first + UInt32(count)
        }
    }

    /// The id of `string`, or `nil` when the store had not seen it when the snapshot began.
    ///
    /// The store keeps no string → id index on disk: the first lookup in a process reads the whole
    /// `strings` database into a table shared by all snapshots of the ``Store``, and later lookups read
    /// only strings added since (ids are dense and never change, so the table never goes stale).
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when `strings` is not dense, repeats a string, or
    ///   holds a chunk that does not decode (or fails its checksum), also when the damaged chunk is the last one and
    ///   the string is not found before it.
    /// - Complexity: O(1) expected, after O(new strings) to bring the table up to date.
    public func id(of string: String) throws -> StringID? {
        let id = try cache.id(of: string, txn: txn, dbs: dbs, limit: stringCount)
        if id == nil, let stringsDamage { throw stringsDamage }
        return id
    }

    /// The ids of `strings` (`nil` for each the store had not seen when the snapshot began), found without loading
    /// the dictionary: from the table ``id(of:)`` loads when a lookup already did, and else in one pass over the
    /// `strings` chunks the table lacks, each entry compared with the strings not found yet, keeping none. For a few
    /// lookups in a process that has not loaded the table (a query naming one session: 69–108 ms instead of 0.75 s on
    /// a 33 M-event store with 2.05 M strings); many lookups are cheaper through ``id(of:)``.
    ///
    /// Strings are compared byte for byte, as ``id(of:)`` compares them: a canonically equivalent spelling in another
    /// Unicode form is another string here.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when a chunk does not decode.
    /// - Complexity: O(strings the table lacks × `strings.count`) bytes compared, O(`strings.count`) memory.
    package func findIDs(of strings: [String]) throws -> [StringID?] {
        let ids = try cache.ids(of: strings, txn: txn, dbs: dbs, limit: stringCount)
        if ids.contains(nil), let stringsDamage { throw stringsDamage }
        return ids
    }
}
