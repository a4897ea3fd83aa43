import BoardwalkCodec
import BoardwalkModel
internal import CPrefetch

/// Prefetches, in stages, what interning the session and profile ids of the next few events of a batch will read
/// (StringTable, "What a lookup will read").
///
/// With 100 000 sessions in flight most of those ids miss the string table's identity cache, and each lookup
/// waited for memory up to four times in a row: the table's lookups took 40 % of `append` without the session
/// index (`perf record`). An event takes over a microsecond to append, a miss about a tenth of that, so one event
/// ahead per stage is time enough: before event `i` is appended, the ids' bytes of event `i + 4`, their hash table
/// slots for `i + 3` (hashing them: their bytes have arrived), the table's `String`s for `i + 2` (reading the
/// slots), and the table strings' bytes for `i + 1` (reading those `String`s). A prefetch never faults and changes
/// nothing.
struct IDPrefetcher {
    /// The hashes of the session and profile ids of the events one to three ahead (`nil`: absent, or answered by the
    /// identity cache), by event index modulo 4.
    private var hashes = [(session: UInt64?, profile: UInt64?)](repeating: (nil, nil), count: 4)

    /// Runs the four stages before event `index` of `events` is appended. The table may grow between stages (the
    /// batch interns): a rehash moves slots, and a stage then prefetches a useless line, which is harmless.
    @inline(__always)
    mutating func advance(_ events: UnsafeBufferPointer<Event>, at index: Int, _ table: borrowing StringTable) {
        let base = events.baseAddress!
        if index + 4 < events.count {
            let event = base + index + 4
            IDPrefetcher.withID(event.pointer(to: \.session)!) { IDPrefetcher.prefetchBytes(at: $0) }
            IDPrefetcher.withID(event.pointer(to: \.profile)!) { IDPrefetcher.prefetchBytes(at: $0) }
        }
        if index + 3 < events.count {
            let event = base + index + 3
            let session = IDPrefetcher.withID(event.pointer(to: \.session)!) { table.uncachedHash(at: $0) } ?? nil
            let profile = IDPrefetcher.withID(event.pointer(to: \.profile)!) { table.uncachedHash(at: $0) } ?? nil
            if let h = session { bw_prefetch(table.slotAddress(hash: h)) }
            if let h = profile { bw_prefetch(table.slotAddress(hash: h)) }
            hashes[(index + 3) & 3] = (session, profile)
        }
        if index + 2 < events.count {
            let (session, profile) = hashes[(index + 2) & 3]
            if let h = session { bw_prefetch(table.entryAddress(hash: h)) }
            if let h = profile { bw_prefetch(table.entryAddress(hash: h)) }
        }
        if index + 1 < events.count {
            let (session, profile) = hashes[(index + 1) & 3]
            if let h = session { bw_prefetch(table.storedBytesAddress(hash: h)) }
            if let h = profile { bw_prefetch(table.storedBytesAddress(hash: h)) }
        }
    }

    /// Asks for the first 64 bytes of the string stored at `string` (``StringTable/utf8Address(at:)``).
    @inline(__always)
    static func prefetchBytes(at string: UnsafePointer<String>) {
        guard let bytes = StringTable.utf8Address(at: string) else { return }
        bw_prefetch(bytes)
        bw_prefetch(bytes + 63)
    }

    /// `body` with the string of a present, non-empty optional id, in place; `nil` when it is absent or empty.
    @inline(__always)
    private static func withID<R>(_ field: UnsafePointer<String?>, _ body: (UnsafePointer<String>) -> R) -> R? {
        if Store.isMissing(at: field) { return nil }
        // A present value sits unchanged at offset 0 of the optional (`nil` is an extra inhabitant).
        return field.withMemoryRebound(to: String.self, capacity: 1, body)
    }
}
