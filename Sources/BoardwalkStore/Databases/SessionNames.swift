import BoardwalkCodec
import BoardwalkStoreFormat

/// `session_names`: sessions by the name of their id and by the names of their events' profiles (docs/storage.md).
///
/// The store keeps no string → id index (strings are appended in chunks, looked up by id), so a question about one
/// session or one profile named by its string would otherwise walk the whole dictionary to find the id and then,
/// for a profile, every event. Here each entry starts with a fixed 64-bit hash of the name's bytes: a seek per run
/// finds the sessions, and the entry's string id tells a true match from a collision.
///
/// Hashes are random, so a B-tree keyed by them takes each new session's entries on a random leaf and rewrites most
/// of its leaves as it grows: folded into such a tree, the index cost 0.9 G instructions of the 3.5 G of appending
/// 200 000 events of 100 000 sessions. The entries are kept as sorted runs instead, merged as a binary counter merges
/// its carries: each batch's entries become the newest run, merged with the newest stored runs while those are not
/// at least twice its size. An entry is rewritten about log2(entries / batch) times, by sequential copies, and
/// there are at most about as many runs as that, each found by one seek.
enum SessionNames {
    /// An entry's bytes: hash of the name's UTF-8 bytes (8) ‖ role (1) ‖ session id (4) ‖ the name's string id (4).
    static let entrySize = 17
    /// The largest number of entries in one stored chunk of a run (17 KiB).
    static let chunkEntries = 1024
    /// The directory's key: 8 zero bytes (run ids start at 1, so it sorts before every chunk).
    static let directoryKey = [UInt8](repeating: 0, count: 8)
    /// A chunk's key: its run's id (8) ‖ its last entry (17).
    static let chunkKeySize = 8 + entrySize

    /// What the name is to the session (an entry's ninth byte).
    enum Role: UInt8 {
        /// The session's own id.
        case session = 0
        /// A profile id that an event of the session carries.
        case profile = 1
    }

    /// The hash of a name: the string dictionary's own (``StringTable/hashOfBytes(_:)``), which the writer's table
    /// already holds for every string it interned, so indexing a session reads none of its bytes again. Fixed, not
    /// seeded: it is part of the format. A collision costs a look at the colliding entry's string, never a wrong
    /// answer. (Hashing the name again from its `String` cost about 270 instructions a new session.)
    static func hash(_ name: String) -> UInt64 {
        StringTable.hashOfBytes(name)
    }

    /// An entry, ordered by hash, role, session and name: the order of its bytes.
    struct Entry: Hashable, Comparable {
        var hash: UInt64
        var role: UInt8
        var session: UInt32
        var name: UInt32

        static func < (a: Entry, b: Entry) -> Bool {
            if a.hash != b.hash { return a.hash < b.hash }
            if a.role != b.role { return a.role < b.role }
            if a.session != b.session { return a.session < b.session }
            return a.name < b.name
        }

        /// Writes the entry's ``SessionNames/entrySize`` bytes at `bytes`.
        func store(_ bytes: UnsafeMutableRawPointer) {
            bytes.storeBE(hash, at: 0)
            bytes.storeBytes(of: role, toByteOffset: 8, as: UInt8.self)
            bytes.storeBE(session, at: 9)
            bytes.storeBE(name, at: 13)
        }

        /// The entry at `offset` of `bytes`.
        init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
            self.init(
                hash: bytes.be64(offset), role: bytes[offset + 8], session: bytes.be32(offset + 9),
                name: bytes.be32(offset + 13))
        }

        init(hash: UInt64, role: UInt8, session: UInt32, name: UInt32) {
            self.hash = hash
            self.role = role
            self.session = session
            self.name = name
        }
    }

    /// A stored run: its id (the first 8 bytes of its chunks' keys) and how many entries it holds.
    struct Run: Hashable {
        var id: UInt64
        var count: UInt32
    }

    /// The directory, stored under ``directoryKey``: checksum (4) ‖ next run id (8) ‖ per run, oldest (largest)
    /// first, its id (8) and entry count (4). Absent in a store without sessions.
    struct Directory: Equatable {
        var nextRun: UInt64 = 1
        var runs: [Run] = []

        static let runSize = 12

        /// The directory of `txn`'s snapshot; an empty one when none is stored.
        /// - Throws: ``StoreError/Kind/corrupt`` when it is damaged or malformed.
        static func read(_ txn: Transaction, _ dbs: Databases) throws -> Directory {
            guard let value = try directoryKey.withUnsafeBytes({ try txn.get(dbs.sessionNames, $0) }) else {
                return Directory()
            }
            return try Directory(decoding: value)
        }

        init() {}

        init(decoding value: UnsafeRawBufferPointer) throws {
            let header = StoredChecksum.size + 8
            guard value.count >= header, (value.count - header) % Directory.runSize == 0 else {
                throw StoreError(.corrupt, "session_names: the directory of runs is \(value.count) bytes long")
            }
            do {
                try StoredChecksum.verify(value, seed: directoryKey.withUnsafeBytes { CRC32C($0) })
            } catch {
                throw StoreError(
                    .corrupt,
                    "session_names: the directory of runs is damaged: its bytes changed after they were written",
                    underlying: error)
            }
            nextRun = value.be64(StoredChecksum.size)
            runs = stride(from: header, to: value.count, by: Directory.runSize).map {
                Run(id: value.be64($0), count: value.be32($0 + 8))
            }
        }

        /// Stores the directory, sealed.
        func write(_ txn: Transaction, _ dbs: Databases) throws {
            var value = [UInt8](repeating: 0, count: StoredChecksum.size + 8 + runs.count * Directory.runSize)
            value.withUnsafeMutableBytes { v in
                v.baseAddress!.storeBE(nextRun, at: StoredChecksum.size)
                for (i, run) in runs.enumerated() {
                    let at = StoredChecksum.size + 8 + i * Directory.runSize
                    v.baseAddress!.storeBE(run.id, at: at)
                    v.baseAddress!.storeBE(run.count, at: at + 8)
                }
                StoredChecksum.seal(v, seed: directoryKey.withUnsafeBytes { CRC32C($0) })
            }
            try directoryKey.withUnsafeBytes { k in
                try value.withUnsafeBytes { _ = try txn.put(dbs.sessionNames, k, $0) }
            }
        }
    }

    /// The entries of the chunk stored under `key` (a chunk key), after checking its checksum and shape.
    /// - Throws: ``StoreError/Kind/corrupt`` naming the run, when it is damaged or malformed.
    static func chunkEntries(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws
        -> UnsafeRawBufferPointer
    {
        guard key.count == chunkKeySize else {
            throw StoreError(.corrupt, "session_names: a key is \(key.count) bytes long")
        }
        let run = key.be64(0)
        guard value.count > StoredChecksum.size, (value.count - StoredChecksum.size) % entrySize == 0 else {
            throw StoreError(.corrupt, "session_names: a chunk of run \(run) is \(value.count) bytes long")
        }
        do {
            try StoredChecksum.verify(value, seed: CRC32C(key))
        } catch {
            throw StoreError(
                .corrupt,
                "session_names: a chunk of run \(run) is damaged: its bytes changed after they were written, "
                    + "so sessions looked up by name or profile may be missed",
                underlying: error)
        }
        let entries = UnsafeRawBufferPointer(rebasing: value[StoredChecksum.size...])
        guard entries.suffix(entrySize).elementsEqual(key.suffix(entrySize)) else {
            throw StoreError(.corrupt, "session_names: a chunk of run \(run) does not end with its key's entry")
        }
        return entries
    }
}
