import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

extension WriterState {
    /// Interns through the writer's in-memory table; new strings are appended to `strings` in the running
    /// transaction by ``flush()``, which the batch calls when its loop ends (however it ends). There is no
    /// reverse index on disk: readers build one in memory (see ``SharedStringTable``). A struct (the table moved
    /// in for the batch) so that the encoder's calls need no dynamic exclusivity checks.
    ///
    /// Why one flush rather than a put per new string: `mdb_put` with `MDB_APPEND` opens a cursor and walks
    /// from the root to the last leaf for every string (about 1 360 instructions per new string with
    /// 100 000 sessions in flight, two new UUID strings per new session); one cursor kept at the end of
    /// the tree appends each string to the last leaf directly.
    struct Interner: StringInterner {
        var table: StringTable
        let txn: Transaction
        let dbs: Databases
        /// Strings of the table that are in `strings` (in this transaction): ids below it.
        var stored: Int
        /// A string interned for the event being encoded was longer than ``Store/longString`` (the append loop then
        /// checks the event against the limits of an NDJSON export: see `Store.interchangeLimitError`). Every call
        /// looks, not only those that add a string: a long string can already be in the table (a refused event's
        /// strings are kept, and older stores hold long strings of their own).
        var sawLongString = false

        mutating func intern(_ string: String) throws -> StringID {
            if string.utf8.count > Store.longString { sawLongString = true }
            return table.intern(string)
        }

        /// A string the table's identity cache knows is answered in place (no retain, nothing to persist);
        /// anything else goes through ``intern(_:)``.
        mutating func intern(at string: UnsafePointer<String>) throws -> StringID {
            if string.pointee.utf8.count > Store.longString { sawLongString = true }
            return table.intern(at: string)
        }

        /// Appends the strings interned since the last flush to `strings`, in id order, as chunks of about
        /// ``Layout/stringChunkTarget`` bytes through one cursor (``StringChunks``).
        /// On a throw the table is cut back to what is stored, so that it never names an id `strings` lacks.
        mutating func flush() throws {
            guard stored < table.count else { return }
            let strings = table.strings
            var done = stored
            do {
                try txn.withCursor(dbs.strings) { c in
                    // No nested function: one that captured these locals would box them, and every access to a
                    // boxed variable pays a dynamic exclusivity check (~120 instructions per string, measured).
                    var chunk = StringChunkBuilder()
                    var next = done
                    while next < strings.count {
                        chunk.reset()
                        let first = next
                        repeat {
                            // The strings are the batch's new ones, out of cache by now: each read waited for memory.
                            if next + 4 < strings.count {
                                strings.withUnsafeBufferPointer {
                                    IDPrefetcher.prefetchBytes(at: $0.baseAddress! + next + 4)
                                }
                            }
                            if chunk.count > 0
                                && chunk.byteCount(appending: strings[next].utf8.count) > Layout.stringChunkTarget
                            {
                                break
                            }
                            strings[next].withUTF8Bytes { chunk.append($0) }
                            next += 1
                        } while next < strings.count
                        var be = UInt32(first).bigEndian
                        // Ids only grow, so every chunk's first id is above the last key of `strings`; a refused
                        // append means the stored dictionary is ahead of this writer's, and the id would name
                        // another string.
                        let appended = try withUnsafeBytes(of: &be) { key in
                            try chunk.withValue(checksumSeed: StringChunks.checksumSeed(first: StringID(first))) {
                                value in try c.put(key, value, flags: PutFlags.append)
                            }
                        }
                        guard appended else {
                            throw StoreError(
                                .corrupt,
                                "the strings database already holds id \(first) or a later one; the dictionary in memory is behind it"
                            )
                        }
                        done = next
                    }
                }
            } catch {
                table = StringTable(strings: Array(strings.prefix(done)))
                stored = done
                throw error
            }
            stored = done
        }
    }
}
