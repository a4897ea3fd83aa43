import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

extension Snapshot {
    /// Calls `body` for the events of one onboarding (or of all, when `onboarding` is `nil`), in
    /// (onboarding, screen index, time, seq) order, optionally limited to a screen range and a time range.
    ///
    /// Only the blocks that can hold matching events are read: per screen, the scan seeks to the first
    /// block that can hold an event of the time range (`MDB_SET_RANGE` on the range's start minus the
    /// widest block span) and stops at the first block that starts past its end. Blocks of one screen
    /// written by different batches may overlap in time; their events are merged.
    /// The ``EventView`` is valid only inside `body`. Return `false` from `body` to stop.
    /// - Parameters:
    ///   - onboarding: an id from ``id(of:)``; `nil` scans the whole store;
    ///     `RecordFormat.noOnboarding` selects events without `meta`.
    ///   - screens: screen indexes to include (ignored when `onboarding` is `nil`).
    ///   - time: the half-open time range to include.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a key, block or record that does not decode.
    /// - Complexity: O(log N) per screen visited, plus O(1) amortized per event of the blocks read
    ///   (O(k) per event while k blocks overlap in time).
    public func forEachEvent(
        onboarding: StringID?, screens: ClosedRange<Int>? = nil, time: Range<Timestamp>? = nil,
        _ body: (EventView) throws -> Bool
    ) throws {
        try forEachRecord(onboarding: onboarding, screens: screens, time: time) { record in try body(try record.view())
        }
    }

    /// ``forEachEvent(onboarding:screens:time:_:)``, handing out each event undecoded: its seq, time, key
    /// fields and record body. The caller decodes what it reads, with ``EventRecord/fields()`` (the few fields
    /// a session fold needs, a fraction of the cost) or ``EventRecord/view()`` (the full, validated view).
    /// The ``EventRecord`` is valid only inside `body` (in a read transaction, until it ends: see
    /// ``EventRecord``). Return `false` from `body` to stop.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a key or block that does not decode, and
    ///   whatever `body` throws (records are decoded by the caller).
    /// - Complexity: as ``forEachEvent(onboarding:screens:time:_:)``, without the per-event decode.
    package func forEachRecord(
        onboarding: StringID?, screens: ClosedRange<Int>? = nil, time: Range<Timestamp>? = nil,
        _ body: (EventRecord) throws -> Bool
    ) throws {
        try forEachRun(onboarding: onboarding, screens: screens, time: time) { run in
            while let record = try run.next() {
                guard try body(record) else { return false }
            }
            return true
        }
    }

    /// ``forEachRecord(onboarding:screens:time:_:)`` a run of events at a time: `body` gets an ``EventRun``, the
    /// events of one block that come next in (time, seq) order (usually the whole block), and reads them with
    /// ``EventRun/next()``. The loop over a run's events is then the caller's own (inlined, no call per event).
    /// Return `false` from `body` to stop; events of the run it did not read before returning `true` are skipped.
    /// The run is valid only inside `body`; its records as ``EventRecord`` says. With `kinds`, a block whose header
    /// counts none of the kinds selected is stepped over unread (``KindSelection``), so its events are in no run.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a key or block that does not decode (from
    ///   ``EventRun/next()`` too), and whatever `body` throws.
    package func forEachRun(
        onboarding: StringID?, screens: ClosedRange<Int>? = nil, time: Range<Timestamp>? = nil,
        wanting kinds: KindSelection? = nil, _ body: (inout EventRun) throws -> Bool
    ) throws {
        let range = TimeRange(time)
        try withHeads(following: kinds) { heads in try forEachRun(onboarding, screens, range, kinds, &heads, body) }
    }

    /// ``forEachRun(onboarding:screens:time:wanting:_:)`` with the follower of `block_heads` that `kinds` needs.
    private func forEachRun(
        _ onboarding: StringID?, _ screens: ClosedRange<Int>?, _ range: TimeRange, _ kinds: KindSelection?,
        _ heads: inout HeadFollower?, _ body: (inout EventRun) throws -> Bool
    ) throws {
        var open: [OpenBlock] = []
        try withBlockCursor { c in
            guard let onboarding else {
                var found = try c.first()
                while found {
                    let key = try decodeBlockKey(c.key)
                    let group = UInt64(key.onboarding) << 16 | UInt64(key.screen)
                    if key.timeBits < range.seekBits {
                        found = try seek(
                            &c,
                            EventKey(onboarding: key.onboarding, screen: key.screen, timeBits: range.seekBits, seq: 0))
                    }
                    guard
                        try scanGroup(
                            &c, found: found, onboarding: key.onboarding, screen: key.screen, range, kinds, &heads,
                            &open, body)
                    else { return }
                    if group == 0xFFFF_FFFF_FFFF { return }
                    let next = group + 1
                    found = try seek(
                        &c,
                        EventKey(
                            onboarding: UInt32(truncatingIfNeeded: next >> 16),
                            screen: UInt16(truncatingIfNeeded: next), timeBits: 0, seq: 0))
                }
                return
            }
            if let screens, screens.upperBound < 0 || screens.lowerBound > Int(UInt16.max) { return }
            let firstScreen = UInt16(clamping: screens?.lowerBound ?? 0)
            let lastScreen = UInt16(clamping: screens?.upperBound ?? Int(UInt16.max))
            var found = try seek(
                &c, EventKey(onboarding: onboarding, screen: firstScreen, timeBits: range.seekBits, seq: 0))
            while found {
                let key = try decodeBlockKey(c.key)
                if key.onboarding != onboarding || key.screen > lastScreen { return }
                if key.timeBits < range.seekBits {
                    found = try seek(
                        &c, EventKey(onboarding: onboarding, screen: key.screen, timeBits: range.seekBits, seq: 0))
                    continue
                }
                guard
                    try scanGroup(
                        &c, found: true, onboarding: onboarding, screen: key.screen, range, kinds, &heads, &open,
                        body)
                else { return }
                if key.screen == lastScreen { return }
                found = try seek(
                    &c, EventKey(onboarding: onboarding, screen: key.screen + 1, timeBits: range.seekBits, seq: 0))
            }
        }
    }

    /// A block being read by a merge, positioned on its current event.
    struct OpenBlock {
        var key: EventKey
        var reader: EventBlockReader
    }

    /// A scan's time range: `lo..<hi` (`hi == nil`: no upper bound) and where a scan of a group starts.
    struct TimeRange {
        var lo: Int64
        var hi: Int64?
        /// The time bits of the earliest block start that can hold an event at `lo` or later.
        var seekBits: UInt64

        init(_ time: Range<Timestamp>?) {
            lo = time?.lowerBound.microseconds ?? .min
            hi = time?.upperBound.microseconds
            seekBits = lo == .min ? 0 : Layout.timeBits(lo.minusSaturating(Layout.blockSpan - 1))
        }

        @inline(__always) func isPastEnd(_ t: Int64) -> Bool { hi.map { t >= $0 } ?? false }
    }

    /// Merges the blocks of one group from the cursor (on the group's first block that can hold events
    /// of `range`, when `found`) in (time, seq) order and calls `body` for the events in `range`.
    /// Returns `false` when `body` asked to stop. Leaves the cursor anywhere.
    private func scanGroup(
        _ c: inout BlockCursor, found: Bool, onboarding: UInt32, screen: UInt16, _ range: TimeRange,
        _ kinds: KindSelection?, _ heads: inout HeadFollower?, _ open: inout [OpenBlock],
        _ body: (inout EventRun) throws -> Bool
    ) throws -> Bool {
        open.removeAll(keepingCapacity: true)
        var found = found
        let hi = range.hi ?? .max, bounded = range.hi != nil, lo = range.lo, limit = stringCount
        // The next block not yet opened, if it belongs to the group and starts before the range ends.
        func pending() throws -> EventKey? {
            guard found else { return nil }
            let key = try decodeBlockKey(c.key)
            guard key.onboarding == onboarding, key.screen == screen,
                !range.isPastEnd(Layout.time(fromBits: key.timeBits))
            else { return nil }
            return key
        }
        var next = try pending()
        while true {
            var m = -1
            for i in open.indices
            where m < 0 || precedes(open[i].reader.time, open[i].reader.seq, open[m].reader.time, open[m].reader.seq) {
                m = i
            }
            if let key = next,
                m < 0 || precedes(Layout.time(fromBits: key.timeBits), key.seq, open[m].reader.time, open[m].reader.seq)
            {
                // A folded block is selected from its head, none of its pages read; one of the event log (no head)
                // from its own header.
                let byHead = try kinds?.admits(key, c.key, heads: &heads, stringLimit: limit)
                if byHead == false {
                    found = try c.next()
                    next = try pending()
                    continue
                }
                guard byHead == true || kinds?.admits(key, c.value, stringLimit: limit) ?? true,
                    var reader = try openBlock(key, c.value)
                else {
                    found = try c.next()
                    next = try pending()
                    continue
                }
                _ = try advance(&reader, key)
                open.append(OpenBlock(key: key, reader: reader))
                found = try c.next()
                next = try pending()
                continue
            }
            if m < 0 { return true }
            // Block m holds the earliest event; it stays the earliest until its events reach the start of the
            // next block to open or the current event of another open block. Its events up to there are read
            // from a local copy of its reader (no array access per event); usually that is the whole block.
            var boundTime = Int64.max, boundSeq = UInt64.max
            if let key = next { (boundTime, boundSeq) = (Layout.time(fromBits: key.timeBits), key.seq) }
            for i in open.indices where i != m && precedes(open[i].reader.time, open[i].reader.seq, boundTime, boundSeq)
            {
                (boundTime, boundSeq) = (open[i].reader.time, open[i].reader.seq)
            }
            var run = EventRun(
                reader: open[m].reader, blockSeq: open[m].key.seq, onboarding: onboarding, screen: screen,
                lo: lo, hi: hi, bounded: bounded, boundTime: boundTime, boundSeq: boundSeq, stringLimit: limit)
            guard try body(&run) else { return false }
            // Skip what the body left unread, so that the reader stands on the first event after the run.
            while !run.ended { _ = try run.next() }
            // Every event not yet seen comes at or after this one.
            if run.pastEnd { return true }
            if run.blockDone {
                open.swapAt(m, open.count - 1)
                open.removeLast()
            } else {
                open[m].reader = run.reader
            }
        }
    }

    /// ``forEachEvent(onboarding:screens:time:_:)`` by the onboarding's id string; no events when the
    /// store has never seen it.
    /// - Throws: as ``forEachEvent(onboarding:screens:time:_:)-(StringID?,_,_,_)``, and
    ///   ``StoreError/Kind/corrupt`` when the string dictionary is damaged (``id(of:)``).
    public func forEachEvent(
        onboarding: String, screens: ClosedRange<Int>? = nil, time: Range<Timestamp>? = nil,
        _ body: (EventView) throws -> Bool
    ) throws {
        guard let id = try id(of: onboarding) else { return }
        try forEachEvent(onboarding: id, screens: screens, time: time, body)
    }
}
