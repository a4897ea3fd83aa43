import BoardwalkCodec
import BoardwalkModel

/// An event's place in the `events` key order, as the session index references it: its group (onboarding ‖ screen,
/// one integer), time and seq. An event without `meta` has group ``RecordFormat/noOnboarding`` ‖
/// ``RecordFormat/noScreen``.
package struct EventAddress: Comparable, Sendable {
    /// onboarding ‖ screen.
    package var group: UInt64
    package var time: Int64
    package var seq: UInt64

    /// After every event's address.
    package static let last = EventAddress(group: .max, time: .max, seq: .max)

    package init(group: UInt64, time: Int64, seq: UInt64) {
        self.group = group
        self.time = time
        self.seq = seq
    }

    package init(onboarding: StringID, screen: UInt16, time: Int64, seq: UInt64) {
        self.init(group: UInt64(onboarding) << 16 | UInt64(screen), time: time, seq: seq)
    }

    /// Key order: group, then time, then seq.
    @inline(__always)
    package static func < (a: EventAddress, b: EventAddress) -> Bool {
        (a.group, a.time, a.seq) < (b.group, b.time, b.seq)
    }
}

extension Snapshot {
    /// Calls `body` with the record of each event of `addresses` and its index there, in key order, as the session
    /// index's references find them (``forEachSession(_:time:batchReferences:_:)``): the blocks that hold them are
    /// read in key order and walked forward, so addresses that share a block cost one walk of it. An address listed
    /// twice is handed out twice. Return `false` from `body` to stop.
    ///
    /// The records borrow the read transaction, as ``EventRecord`` says.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when a key or block does not decode or an address
    ///   names no stored event; whatever `body` throws.
    /// - Complexity: O(a log a) for a addresses, then about one walk of each block that holds one of them, up to
    ///   its last such event, and O(log N) per seek between blocks that are not neighbours.
    package func forEachRecord(at addresses: [EventAddress], _ body: (Int, EventRecord) throws -> Bool) throws {
        guard !addresses.isEmpty else { return }
        let keyed = addresses.indices.map { i in
            KeyedRef(group: addresses[i].group, time: addresses[i].time, seq: addresses[i].seq, position: i)
        }.sorted()
        try withBlockCursor { events in
            var walk = BlockWalk()
            for ref in keyed {
                let bytes = try walk.find(ref, &events, self)
                // An event of a damaged block that a read around damage stepped over.
                guard bytes.baseAddress != nil else { continue }
                let record = EventRecord(
                    seq: ref.seq, time: ref.time, onboarding: UInt32(truncatingIfNeeded: ref.group >> 16),
                    screen: UInt16(truncatingIfNeeded: ref.group), body: bytes, stringLimit: stringCount)
                guard try body(ref.position, record) else { return }
            }
        }
    }
}
