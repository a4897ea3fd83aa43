import BoardwalkCodec
import BoardwalkStoreFormat

/// The `strings` database: the dictionary's strings in chunks of consecutive ids.
///
/// Key: the id of the chunk's first string (4 bytes, big-endian). Value: a string chunk (`docs/codec.md`,
/// ``StringChunkReader``). Ids are dense from 0: each chunk's key is the previous chunk's key plus its count.
/// The writer appends one chunk per ``Layout/stringChunkTarget`` bytes of a batch's new strings, never
/// changes one, and a reader finds string `id` in the chunk with the largest key at or below it.
enum StringChunks {
    /// The checksum of a chunk's key (its first id, 4 bytes big-endian), which the chunk's own checksum continues.
    static func checksumSeed(first: StringID) -> CRC32C {
        withUnsafeBytes(of: first.bigEndian) { CRC32C($0) }
    }

    /// Calls `body` with each string from id `start` on, in id order, until it returns `false` or the strings
    /// end. Nothing is called when `start` is at or past the last string.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when a key is malformed, the ids are not dense
    ///   (checked from the chunk holding `start` on, and from id 0 when `start` is 0), or a chunk does not decode;
    ///   LMDB errors; whatever `body` throws.
    /// - Complexity: O(log chunks) to find `start`, then O(bytes read).
    static func forEach(
        in txn: Transaction, _ dbs: Databases, from start: StringID,
        _ body: (StringID, StringChunkEntry) throws -> Bool
    ) throws {
        try txn.withCursor(dbs.strings) { c in
            var found = try seekChunk(&c, holding: start)
            var expected: UInt32? = start == 0 ? 0 : nil
            while found {
                let first = try chunkKey(c.key)
                if let expected, first != expected {
                    throw StoreError(
                        .corrupt,
                        "the strings database is not dense at id \(expected) (the next chunk starts at \(first))")
                }
                var id = first
                do {
                    var reader = try StringChunkReader(c.value, checksumSeed: checksumSeed(first: first))
                    // Ids are `0..<RecordFormat.absent`: the chunk's last id, first + count - 1, must be below it.
                    guard UInt64(first) + UInt64(reader.count) <= UInt64(RecordFormat.absent) else {
                        throw StoreError(
                            .corrupt, "the strings chunk at id \(first) holds \(reader.count) strings, past the last id"
                        )
                    }
                    while let entry = try reader.next() {
                        if id >= start, try !body(id, entry) { return }
                        id += 1
                    }
                } catch let error as CodecError {
                    throw StoreError(
                        .corrupt, "the strings chunk at id \(first) does not decode (string \(id))", underlying: error)
                }
                expected = id
                found = try c.next()
            }
        }
    }

    /// How many strings the database holds: the last chunk's key plus its count.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when the last key is malformed or the last chunk's
    ///   count does not decode.
    /// - Complexity: O(log chunks).
    static func count(in txn: Transaction, _ dbs: Databases) throws -> UInt32 {
        try txn.withCursor(dbs.strings) { c in
            guard try c.last() else { return 0 }
            let first = try chunkKey(c.key)
            do {
                let count = try StringChunkReader(c.value, checksumSeed: checksumSeed(first: first)).count
                guard UInt64(first) + UInt64(count) <= UInt64(RecordFormat.absent) else {
                    throw StoreError(
                        .corrupt, "the strings chunk at id \(first) holds \(count) strings, past the last id")
                }
                return first + UInt32(count)
            } catch let error as CodecError {
                throw StoreError(.corrupt, "the last strings chunk (at id \(first)) does not decode", underlying: error)
            }
        }
    }

    /// Positions `c` at the chunk with the largest key at or below `id`; `false` when there is none (an empty
    /// database, or a first key above `id`, which ``forEach(in:_:from:_:)`` reports when it starts at 0).
    private static func seekChunk(_ c: inout Cursor, holding id: StringID) throws -> Bool {
        var be = id.bigEndian
        if try withUnsafeBytes(of: &be, { try c.seek($0) }) {
            if c.key.count == 4 && c.key.be32(0) == id { return true }
            return try c.previous()
        }
        return try c.last()
    }

    private static func chunkKey(_ key: UnsafeRawBufferPointer) throws -> UInt32 {
        guard key.count == 4 else { throw StoreError(.corrupt, "a strings key is \(key.count) bytes, not 4") }
        return key.be32(0)
    }
}
