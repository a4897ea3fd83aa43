import BoardwalkCodec
import BoardwalkModel

// Reading many sessions through the session index a batch at a time (docs/storage.md, "Reading many sessions").
//
// One session read (`forEachIndexedEvent`) walks the values of the session's bucket and then finds each event on
// its own: a B-tree seek per event and a walk of its block from the block's first event, since a session's
// consecutive events lie in different (onboarding, screen) groups. A batch turns that around: the references of
// a few thousand sessions are collected (each bucket walked once for all of them), sorted by event key, and the
// blocks they point into are read in key order, each walked forward once; then each session's events are handed
// out in (time, seq) order. Record bodies are borrowed from the read transaction, so they stay valid until the
// batch is delivered.

/// A reference collected for a batch: an event of one of the batch's sessions, as the session index lists it.
struct BatchRef {
    var time: Int64
    var seq: UInt64
    var onboarding: UInt32
    /// The session's place in the batch.
    var slot: UInt32
    var screen: UInt16
}

/// A reference in event-key order, for the walk over the blocks: its group, time and seq, and its place in
/// session order.
struct KeyedRef: Comparable {
    /// onboarding ‖ screen, so that one integer compares the group.
    var group: UInt64
    var time: Int64
    var seq: UInt64
    var position: Int

    /// Event-key order; the same event listed twice (a damaged index) keeps session order.
    @inline(__always)
    static func < (a: KeyedRef, b: KeyedRef) -> Bool {
        if a.group != b.group { return a.group < b.group }
        if a.time != b.time { return a.time < b.time }
        if a.seq != b.seq { return a.seq < b.seq }
        return a.position < b.position
    }
}

/// The reusable buffers of a batched session read; every array keeps its capacity from batch to batch, so memory
/// is that of the largest batch.
struct SessionBatch {
    /// The batch's sessions in delivery order; `canonical[i]` is the slot whose events session `i` gets (itself,
    /// or the first slot of the same id when the batch lists an id twice).
    var sessions: [StringID] = []
    var canonical: [UInt32] = []
    /// (id, slot) by id: the order in which the buckets are walked.
    var byID: [(id: StringID, slot: UInt32)] = []
    /// References in the order the buckets are walked.
    var collected: [BatchRef] = []
    /// References by session (slot order), each session's in (time, seq) order; `starts[slot]..<starts[slot + 1]`.
    var ordered: [BatchRef] = []
    var starts: [Int] = []
    /// References in event-key order, and the group of each of `ordered`'s.
    var keyed: [KeyedRef] = []
    var groups = GroupTable()
    var refGroups: [Int32] = []
    /// The record body of `ordered[i]`, once found.
    var bodies: [UnsafeRawBufferPointer] = []
    /// The slot of each low-bits value of the bucket being walked.
    var lowSlots = [UInt32](repeating: 0, count: Int(Layout.sessionBucketWidth))
    /// One session's records, handed to the caller.
    var records: [EventRecord] = []

    /// The references collected by the last batch.
    var count: Int { ordered.count }

    /// Collects the references of `ids` (in the time range) from the session index, walking each bucket's values
    /// once for all of the batch's sessions in it, and arranges them by session in (time, seq) order.
    /// - Complexity: O(log N) per bucket (a seek, unless the cursor is on it already), plus the run headers of the
    ///   bucket's values, plus the entries of the batch's sessions; then O(r log r) for r references.
    mutating func collect(_ ids: ArraySlice<StringID>, _ c: inout Cursor, _ log: SessionLog, _ txn: Transaction, _ dbs: Databases,
                          _ range: Snapshot.TimeRange) throws {
        sessions.removeAll(keepingCapacity: true)
        sessions.append(contentsOf: ids)
        canonical.removeAll(keepingCapacity: true)
        byID.removeAll(keepingCapacity: true)
        for (slot, id) in sessions.enumerated() {
            canonical.append(UInt32(slot))
            byID.append((id, UInt32(slot)))
        }
        // Sorted by id, then slot: a repeated id keeps its first slot as the one that collects.
        byID.sort { $0.id < $1.id || ($0.id == $1.id && $0.slot < $1.slot) }
        collected.removeAll(keepingCapacity: true)
        var positioned = false
        var i = 0
        while i < byID.count {
            let bucket = byID[i].id >> Layout.sessionBucketShift
            var wanted: UInt64 = 0
            var j = i
            while j < byID.count, byID[j].id >> Layout.sessionBucketShift == bucket {
                let low = byID[j].id & (Layout.sessionBucketWidth - 1)
                if wanted & (1 << UInt64(low)) != 0 {
                    canonical[Int(byID[j].slot)] = lowSlots[Int(low)]
                } else {
                    wanted |= 1 << UInt64(low)
                    lowSlots[Int(low)] = byID[j].slot
                }
                j += 1
            }
            // The walk of the previous bucket stops on the next bucket's first value: no seek when that is this one.
            var found = positioned && c.key.count == Layout.sessionKeySize && c.key.be32(0) == bucket
            if !found { found = try c.seekBucket(of: byID[i].id) }
            while found {
                guard c.key.count == Layout.sessionKeySize else {
                    throw StoreError(.corrupt, "a sessions key is \(c.key.count) bytes, not \(Layout.sessionKeySize)")
                }
                if c.key.be32(0) != bucket { break }
                try collect(bucket: bucket, keySeq: c.key.be64(4), c.value, wanted: wanted, range)
                found = try c.next()
            }
            try log.forEachSegment(of: bucket, txn, dbs) { keySeq, segment in
                try collect(bucket: bucket, keySeq: keySeq, segment, wanted: wanted, range)
                return true
            }
            positioned = found
            i = j
        }
        arrangeBySession()
    }

    /// Collects the references of the wanted sessions (`wanted`: a bit per low-bits value) in one value or session-log
    /// segment of `bucket`; other sessions' runs are skipped by their length.
    private mutating func collect(bucket: UInt32, keySeq: UInt64, _ bytes: UnsafeRawBufferPointer, wanted: UInt64,
                                  _ range: Snapshot.TimeRange) throws {
        var reader = try sessionBucketReader(bucket: bucket, keySeq: keySeq, bytes)
        while try reader.nextRun(bucket: bucket, keySeq: keySeq) {
            guard wanted & (1 << UInt64(reader.low)) != 0 else { continue }
            let slot = lowSlots[Int(reader.low)]
            while try reader.nextEntry(bucket: bucket, keySeq: keySeq) {
                let time = reader.time
                guard time >= range.lo, !range.isPastEnd(time) else { continue }
                collected.append(BatchRef(time: time, seq: reader.seq, onboarding: reader.onboarding, slot: slot,
                                          screen: reader.screen))
            }
        }
    }

    /// `collected` into `ordered`: a counting sort by slot (stable), then each session's references sorted by
    /// (time, seq) where the bucket's values did not list them in that order (later batches' runs may hold
    /// earlier times).
    private mutating func arrangeBySession() {
        let n = sessions.count
        starts.removeAll(keepingCapacity: true)
        starts.append(contentsOf: repeatElement(0, count: n + 1))
        for ref in collected { starts[Int(ref.slot) + 1] += 1 }
        for slot in 0..<n { starts[slot + 1] += starts[slot] }
        ordered.removeAll(keepingCapacity: true)
        ordered.append(contentsOf: collected)
        var next = starts
        for ref in collected {
            ordered[next[Int(ref.slot)]] = ref
            next[Int(ref.slot)] += 1
        }
        for slot in 0..<n {
            // Runs come in batch order, which is nearly time order.
            sortNearlySorted(&ordered, starts[slot]..<starts[slot + 1]) { precedes($0.time, $0.seq, $1.time, $1.seq) }
        }
    }

    /// `ordered` into `keyed`, in event-key order: bucketed by group (a counting sort over the batch's groups,
    /// which are few), then each group's references sorted by (time, seq). Within a group they come in session
    /// order, and sessions near in the list are near in time, so they are nearly sorted already: this costs a
    /// fraction of sorting the whole batch by key at once (which took more instructions than the block walk).
    mutating func arrangeByKey() {
        groups.reset()
        refGroups.removeAll(keepingCapacity: true)
        for ref in ordered { refGroups.append(groups.index(of: UInt64(ref.onboarding) << 16 | UInt64(ref.screen))) }
        let count = groups.keys.count
        var byKey = Array(0..<count)
        byKey.sort { groups.keys[$0] < groups.keys[$1] }
        var next = [Int](repeating: 0, count: count)
        var at = 0
        for g in byKey {
            next[g] = at
            at += groups.counts[g]
        }
        let placeholder = KeyedRef(group: 0, time: 0, seq: 0, position: 0)
        keyed.removeAll(keepingCapacity: true)
        keyed.append(contentsOf: repeatElement(placeholder, count: ordered.count))
        for (position, ref) in ordered.enumerated() {
            let g = Int(refGroups[position])
            keyed[next[g]] = KeyedRef(group: groups.keys[g], time: ref.time, seq: ref.seq, position: position)
            next[g] += 1
        }
        var lo = 0
        for g in byKey {
            let hi = lo + groups.counts[g]
            sortNearlySorted(&keyed, lo..<hi) { $0 < $1 }
            lo = hi
        }
    }
}

/// Sorts `a[range]` by `less`: an insertion sort, about linear on nearly sorted input, handing over to the
/// library's sort when the moves pass a budget of a few per element (so never quadratic).
@inline(__always)
func sortNearlySorted<T>(_ a: inout [T], _ range: Range<Int>, by less: (T, T) -> Bool) {
    guard range.count > 1 else { return }
    var budget = 8 * range.count + 64
    for k in range.lowerBound + 1..<range.upperBound {
        let x = a[k]
        var j = k
        while j > range.lowerBound, less(x, a[j - 1]) {
            a[j] = a[j - 1]
            j -= 1
        }
        if j != k {
            a[j] = x
            budget -= k - j
            if budget < 0 {
                a[range].sort(by: less)
                return
            }
        }
    }
}

/// The distinct groups (onboarding ‖ screen) of a batch's references, by open addressing, with a count each.
struct GroupTable {
    var keys: [UInt64] = []
    var counts: [Int] = []
    private var slots = [Int32](repeating: -1, count: 1024)
    private var mask = 1023

    mutating func reset() {
        for g in keys { slots[slot(of: g)] = -1 }
        keys.removeAll(keepingCapacity: true)
        counts.removeAll(keepingCapacity: true)
    }

    /// The index of `key` (a new one when it is new), its count raised by one.
    @inline(__always)
    mutating func index(of key: UInt64) -> Int32 {
        var i = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
        while true {
            let s = slots[i]
            if s < 0 { break }
            if keys[Int(s)] == key {
                counts[Int(s)] += 1
                return s
            }
            i = (i + 1) & mask
        }
        let s = Int32(keys.count)
        slots[i] = s
        keys.append(key)
        counts.append(1)
        if keys.count * 2 > slots.count { grow() }
        return s
    }

    /// The slot holding `key` (which is in the table).
    private func slot(of key: UInt64) -> Int {
        var i = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
        while slots[i] < 0 || keys[Int(slots[i])] != key { i = (i + 1) & mask }
        return i
    }

    private mutating func grow() {
        slots = [Int32](repeating: -1, count: slots.count * 2)
        mask = slots.count - 1
        for (s, key) in keys.enumerated() {
            var i = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
            while slots[i] >= 0 { i = (i + 1) & mask }
            slots[i] = Int32(s)
        }
    }
}

extension Snapshot {
    /// How many references a batch of ``forEachSession(_:time:batchReferences:_:)`` aims at by default: about
    /// 15 MiB of buffers.
    public static let defaultSessionBatchReferences = 1 << 17

    /// Calls `body` with each session of `sessions`, in that order, and the session's events in (time, seq) order,
    /// read through the session index a batch of sessions at a time: ``forEachEvent(inSession:time:_:)`` for many
    /// sessions, without a B-tree seek per event.
    ///
    /// Per batch (consecutive sessions of the list, as many as make about `batchReferences` events at the
    /// sessions' average size so far), the references of the batch's sessions are collected from the session
    /// index, each bucket's values walked once for all of the batch's sessions in it; sorted by event key
    /// (onboarding, screen, time, seq); and the blocks they point into are read in key order, each walked forward
    /// from where the previous reference was found (the next block of a group is reached by a cursor step, a
    /// seek only past a gap). Blocks of a group that overlap in time (late events) are handled: a reference not
    /// found where the key order puts it is looked up among the earlier blocks that can hold it. The records are
    /// handed out undecoded (``EventRecord``: decode with ``EventRecord/view()`` or ``EventRecord/fields(_:)``);
    /// they and the array are valid only inside `body` (the array is reused for the next session).
    ///
    /// A session listed twice gets its events twice. A session with no events (in `time`) is handed out with
    /// none. Sessions come out in list order whatever the batches: a batch is delivered after it has been read,
    /// so a damaged value or block anywhere in a batch throws before any session of that batch is handed out.
    /// Return `false` from `body` to stop.
    /// - Parameters:
    ///   - sessions: session ids (from a scan, ``sessionIDs(ofOnboarding:)`` or ``id(of:)``).
    ///   - time: only the events in this half-open range are handed out.
    ///   - batchReferences: the references a batch aims at; memory is about 120 bytes per reference of the
    ///     largest batch (a batch holds at least one session, however large).
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when a bucket value, key or block does not decode
    ///   or the index lists an event that `events` lacks, and whatever `body` throws.
    /// - Complexity: per batch, O(log N) per bucket plus the run headers of its values, O(r log r) for its r
    ///   references, and O(log N + events walked) per block read: about one walk of each block that holds an
    ///   event of the batch, up to its last such event. Sessions that are near in the list and in time (as a scan
    ///   in key order lists them) share blocks, so a read of many sessions walks each block about once.
    public func forEachSession(_ sessions: [StringID], time: Range<Timestamp>? = nil,
                               batchReferences: Int = Snapshot.defaultSessionBatchReferences,
                               _ body: (StringID, [EventRecord]) throws -> Bool) throws {
        guard !sessions.isEmpty else { return }
        let range = TimeRange(time)
        let target = max(1, batchReferences)
        let log = try sessionLog()
        var batch = SessionBatch()
        try txn.withCursor(dbs.sessions) { index in
            try withBlockCursor { events in
                var start = 0
                // The first batch guesses 32 events per session; later ones use the average seen so far.
                var size = max(1, min(sessions.count, target / 32))
                var seenSessions = 0, seenReferences = 0
                while start < sessions.count {
                    let end = min(sessions.count, start + size)
                    try batch.collect(sessions[start..<end], &index, log, txn, dbs, range)
                    try resolve(&batch, &events)
                    guard try deliver(&batch, body) else { return }
                    seenSessions += end - start
                    seenReferences += batch.count
                    let average = max(1, seenReferences / seenSessions)
                    size = max(1, min(1 << 16, target / average))
                    start = end
                }
            }
        }
    }

    /// Finds the record body of each of the batch's references: the references in event-key order, each block
    /// that holds one read once and walked forward.
    private func resolve(_ batch: inout SessionBatch, _ c: inout BlockCursor) throws {
        batch.arrangeByKey()
        batch.bodies.removeAll(keepingCapacity: true)
        batch.bodies.append(contentsOf: repeatElement(UnsafeRawBufferPointer(start: nil, count: 0), count: batch.ordered.count))
        var walk = BlockWalk()
        for ref in batch.keyed {
            batch.bodies[ref.position] = try walk.find(ref, &c, self)
        }
    }

    /// Hands out each session of the batch with its records; `false` when `body` asked to stop.
    private func deliver(_ batch: inout SessionBatch, _ body: (StringID, [EventRecord]) throws -> Bool) throws -> Bool {
        for slot in 0..<batch.sessions.count {
            let from = Int(batch.canonical[slot])
            batch.records.removeAll(keepingCapacity: true)
            for p in batch.starts[from]..<batch.starts[from + 1] {
                let ref = batch.ordered[p]
                batch.records.append(EventRecord(seq: ref.seq, time: ref.time, onboarding: ref.onboarding, screen: ref.screen,
                                                 body: batch.bodies[p], stringLimit: stringCount))
            }
            guard try body(batch.sessions[slot], batch.records) else { return false }
        }
        return true
    }
}

/// The state of a walk over the blocks of `events` for references in event-key order: the block the last
/// reference was found in, its reader on that event, and the key of the block after it, under the cursor.
struct BlockWalk {
    var key = EventKey(onboarding: 0, screen: 0, timeBits: 0, seq: 0)
    var reader: EventBlockReader? = nil
    /// The reader is on an event (its `time` and `seq` are that event's); false before the block's first.
    var onEvent = false
    /// The reader is past the block's last event.
    var exhausted = false
    /// The key under the cursor: the block after `key` in key order (`nil`: no block after it). Meaningful only
    /// while `reader` is set.
    var ahead: EventKey? = nil

    /// How many blocks the walk steps over with the cursor before it seeks instead.
    static let maxSteps = 8

    /// The record body of the event `ref` points to.
    mutating func find(_ ref: KeyedRef, _ c: inout BlockCursor, _ snapshot: Snapshot) throws -> UnsafeRawBufferPointer {
        let onboarding = UInt32(truncatingIfNeeded: ref.group >> 16), screen = UInt16(truncatingIfNeeded: ref.group)
        let target = EventKey(onboarding: onboarding, screen: screen, timeBits: Layout.timeBits(ref.time), seq: ref.seq)
        // The block that holds the event, when blocks do not overlap: the last one whose key is at or before it.
        var placed = false
        if reader != nil, key.onboarding == onboarding, key.screen == screen, key <= target {
            var steps = 0
            while let next = ahead, next <= target, steps < BlockWalk.maxSteps {
                try enter(next, c.value)
                ahead = try c.next() ? try decodeBlockKey(c.key) : nil
                steps += 1
            }
            placed = !(ahead.map { $0 <= target } ?? false)
        }
        if !placed { try seek(target, &c) }
        if reader != nil, key.onboarding == onboarding, key.screen == screen, let body = try walk(to: ref) { return body }
        // Not there: blocks of the group overlap in time (a late batch), or the index is wrong. `locate` looks
        // at every earlier block that can hold the event.
        guard let (found, block) = try snapshot.locate(&c, onboarding: onboarding, screen: screen, time: ref.time, seq: ref.seq) else {
            reader = nil
            throw StoreError(.corrupt, "the session index lists seq \(ref.seq), which is not in events or event_log")
        }
        key = found
        reader = block
        onEvent = true
        exhausted = false
        ahead = try c.next() ? try decodeBlockKey(c.key) : nil
        return block.body
    }

    /// Makes the block under `key` with bytes `value` the walk's block, before its first event.
    @inline(__always)
    private mutating func enter(_ key: EventKey, _ value: UnsafeRawBufferPointer) throws {
        self.key = key
        reader = try blockReader(key, value)
        onEvent = false
        exhausted = false
    }

    /// Positions the walk on the last block whose key is at or before `target` (if any), the cursor on the one
    /// after it.
    private mutating func seek(_ target: EventKey, _ c: inout BlockCursor) throws {
        reader = nil
        var found = try c.seek(target)
        if found {
            let key = try decodeBlockKey(c.key)
            if key == target {
                try enter(key, c.value)
                ahead = try c.next() ? try decodeBlockKey(c.key) : nil
                return
            }
            found = try c.previous()
        } else {
            found = try c.last()
        }
        guard found else { return }
        let key = try decodeBlockKey(c.key)
        guard key.onboarding == target.onboarding, key.screen == target.screen else { return }
        try enter(key, c.value)
        ahead = try c.next() ? try decodeBlockKey(c.key) : nil
    }

    /// Walks the block forward to the event `ref` points to; `nil`, leaving the reader on the first event after
    /// it, when the block does not hold it.
    private mutating func walk(to ref: KeyedRef) throws -> UnsafeRawBufferPointer? {
        guard !exhausted, var block = reader else { return nil }
        if onEvent && !precedes(block.time, block.seq, ref.time, ref.seq) {
            return block.time == ref.time && block.seq == ref.seq ? block.body : nil
        }
        // Past the block's time span or outside its seq range: not in it (and nothing to walk).
        guard block.lastTime >= ref.time, block.minSeq <= ref.seq, ref.seq <= block.maxSeq else { return nil }
        while try advance(&block, key) {
            if precedes(block.time, block.seq, ref.time, ref.seq) { continue }
            reader = block
            onEvent = true
            return block.time == ref.time && block.seq == ref.seq ? block.body : nil
        }
        reader = block
        exhausted = true
        return nil
    }
}
