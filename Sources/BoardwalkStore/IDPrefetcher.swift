import BoardwalkCodec
import BoardwalkModel

/// Prefetches, in stages, what interning the session and profile ids of the next few events of a batch will read
/// (``StringTable/prefetchBytes(at:)``, ``StringTable/prefetchSlot(at:)``, ``StringTable/prefetchEntry(hash:)``).
///
/// With 100 000 sessions in flight most of those ids miss the string table's identity cache, and each lookup
/// waited for memory three times in a row: perf put the table's lookups at 40 % of `append` without the session
/// index. An event takes over a microsecond to append, so one event ahead per stage is time enough for a miss.
struct IDPrefetcher {
    /// The hashes found by the slot stage for the events one and two ahead (`nil`: absent, or answered by the
    /// identity cache), by event index modulo 2: session, then profile.
    private var hashes: ((UInt64?, UInt64?), (UInt64?, UInt64?)) = ((nil, nil), (nil, nil))

    /// Runs the three stages before event `index` is appended: bytes for `index + 3`, slots for `index + 2`,
    /// entries for `index + 1`. The table must not change between a slot stage and its entry stage other than
    /// by interning (a rehash moves slots: the entry stage then prefetches the wrong line, which is harmless).
    @inline(__always)
    mutating func advance(_ events: UnsafeBufferPointer<Event>, at index: Int, _ table: StringTable) {
        let base = events.baseAddress!
        if index + 3 < events.count {
            let event = base + index + 3
            if let s = IDPrefetcher.present(event.pointer(to: \.session)!) { StringTable.prefetchBytes(at: s) }
            if let s = IDPrefetcher.present(event.pointer(to: \.profile)!) { StringTable.prefetchBytes(at: s) }
        }
        if index + 2 < events.count {
            let event = base + index + 2
            let session = IDPrefetcher.present(event.pointer(to: \.session)!).flatMap { table.prefetchSlot(at: $0) }
            let profile = IDPrefetcher.present(event.pointer(to: \.profile)!).flatMap { table.prefetchSlot(at: $0) }
            if index & 1 == 0 { hashes.0 = (session, profile) } else { hashes.1 = (session, profile) }
        }
        if index + 1 < events.count {
            let (session, profile) = (index + 1) & 1 == 0 ? hashes.0 : hashes.1
            if let h = session { table.prefetchEntry(hash: h) }
            if let h = profile { table.prefetchEntry(hash: h) }
        }
    }

    /// The string of a present, non-empty optional, in place.
    @inline(__always)
    private static func present(_ field: UnsafePointer<String?>) -> UnsafePointer<String>? {
        // A present value sits unchanged at offset 0 of the optional (`nil` is an extra inhabitant).
        Store.isMissing(at: field) ? nil : UnsafeRawPointer(field).assumingMemoryBound(to: String.self)
    }
}
