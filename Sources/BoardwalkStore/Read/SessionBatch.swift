import BoardwalkCodec
import BoardwalkModel

// Reading many sessions through the session index a batch at a time (docs/storage.md, "How reads find events").
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
    mutating func collect(
        _ ids: ArraySlice<StringID>, _ c: inout Cursor, _ log: SessionLog, _ txn: Transaction, _ dbs: Databases,
        _ range: Snapshot.TimeRange
    ) throws {
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
    private mutating func collect(
        bucket: UInt32, keySeq: UInt64, _ bytes: UnsafeRawBufferPointer, wanted: UInt64,
        _ range: Snapshot.TimeRange
    ) throws {
        var reader = try sessionBucketReader(bucket: bucket, keySeq: keySeq, bytes)
        while try reader.nextRun(bucket: bucket, keySeq: keySeq) {
            guard wanted & (1 << UInt64(reader.low)) != 0 else { continue }
            let slot = lowSlots[Int(reader.low)]
            while try reader.nextEntry(bucket: bucket, keySeq: keySeq) {
                let time = reader.time
                guard time >= range.lo, !range.isPastEnd(time) else { continue }
                collected.append(
                    BatchRef(
                        time: time, seq: reader.seq, onboarding: reader.onboarding, slot: slot,
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
