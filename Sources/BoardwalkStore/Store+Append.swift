import BoardwalkCodec
import BoardwalkModel

/// What one ``Store/append(_:checkpoint:)`` did.
public struct AppendResult: Hashable, Sendable {
    /// Events stored.
    public var appended: Int
    /// Events skipped because an event with the same event id and time is already stored (or came
    /// earlier in the same batch).
    public var duplicates: Int
    /// The seqs given to the stored events: consecutive, in the order of the input (empty when none).
    public var seqs: Range<UInt64>
}

/// A value the caller stores in the same transaction as a batch of events, for example how far into an
/// input file the batch reached, so that a restarted import resumes exactly where the last commit ended.
public struct Checkpoint: Hashable, Sendable {
    /// The checkpoint's name (1 to 400 UTF-8 bytes).
    public var key: String
    /// Any bytes.
    public var value: [UInt8]

    public init(key: String, value: [UInt8]) {
        self.key = key
        self.value = value
    }
}

extension Store {
    /// Appends a batch of events in one write transaction and returns after it commits (durably, with
    /// the default ``Durability/full``).
    ///
    /// Each stored event gets the next arrival sequence number (`seq`). An event whose event id is
    /// already stored with the same time is skipped and counted in ``AppendResult/duplicates``. An event
    /// without a session gets an inferred one (`docs/storage.md`, "Sessions without ids"). When the map
    /// is full the transaction is aborted, the map grown (every transaction of the process waits) and
    /// the batch redone, so callers never see `MDB_MAP_FULL`.
    ///
    /// Batches of thousands of events amortize the commit's flushes; one event per call is correct but
    /// pays a full commit each time.
    ///
    /// - Parameters:
    ///   - events: the batch; empty is allowed (useful to store only a checkpoint).
    ///   - checkpoint: stored in the same transaction, so it is durable exactly when the batch is.
    /// - Throws: ``StoreError`` (read-only store, bad checkpoint key), ``LMDBError``, or the codec's
    ///   `EncodingError` for an event the record format cannot hold (a screen index above 65 534); on a
    ///   throw nothing of the batch is stored.
    /// - Complexity: O(n log n) for n events, plus O(log N) B-tree work per event and index entry.
    @discardableResult
    public func append(_ events: some Sequence<Event>, checkpoint: Checkpoint? = nil) throws -> AppendResult {
        if let checkpoint {
            let n = checkpoint.key.utf8.count
            guard n >= 1 && n <= Layout.maxInlineKeyString else {
                throw StoreError(.invalidArgument, "a checkpoint key must have 1 to \(Layout.maxInlineKeyString) UTF-8 bytes, not \(n)")
            }
        }
        if let result = try events.withContiguousStorageIfAvailable({ try append(buffer: $0, checkpoint: checkpoint) }) {
            return result
        }
        return try Array(events).withUnsafeBufferPointer { try append(buffer: $0, checkpoint: checkpoint) }
    }

    private func append(buffer batch: UnsafeBufferPointer<Event>, checkpoint: Checkpoint?) throws -> AppendResult {
        try withWriter { writer in
            while true {
                do {
                    let result = try env.transaction(write: true) { txn in
                        try writer.append(batch, checkpoint: checkpoint, txn: txn)
                    }
                    writer.didCommit()
                    return result
                } catch let error as LMDBError where error == .mapFull {
                    // lmdb.h: after MDB_MAP_FULL the transaction "must be aborted"; it was, by `transaction`.
                    writer.didAbort()
                    try env.grow()
                } catch {
                    writer.didAbort()
                    throw error
                }
            }
        }
    }
}

/// The writer's in-memory state: the string dictionary, caches, and reusable buffers.
///
/// Only used under the store's writer lock. Everything a transaction changes here is either rolled back
/// by ``didAbort()`` or confirmed by ``didCommit()``, so a redone batch sees the state as of the last commit.
final class WriterState: StringInterner {
    let dbs: Databases
    /// Every string of the store, ids dense in first-seen order (mirrors the `strings` database).
    private var table = StringTable()
    private var committedStrings = 0
    private var loaded = false
    /// The `next_seq` this writer last committed or read; a different value in `meta` means another
    /// process appended, and the caches are refreshed.
    private var knownNextSeq: UInt64 = 0
    private var nextSeq: UInt64 = 0

    /// Inference state per (profile, onboarding): committed, and changed in the running transaction.
    private var inferCache: [UInt64: InferState] = [:]
    private var pendingInfer: [UInt64: InferState] = [:]
    /// (onboarding, session) pairs known to be in `onboarding_sessions`.
    /// Committed pairs plus those added by the running transaction (listed in `pendingPairs`).
    private var knownPairs = Set<UInt64>()
    private var pendingPairs: [UInt64] = []

    private var txn: Transaction?
    private var encoder = RecordEncoder(capacity: 1 << 20)
    private var entries: [Entry] = []
    private var order: [SortKey] = []
    private var sortBuffer: [SortKey] = []
    private var histogram = [Int](repeating: 0, count: 256)
    private var onboardingStats: [UInt32: OnboardingAccumulator] = [:]
    private let scratch: UnsafeMutableRawPointer
    private let chunk: UnsafeMutableRawPointer

    struct InferState {
        var session: UInt32
        var lastTime: Int64
        /// The session has seen only start events so far (`onboarding_loaded`, `onboarding_started`).
        var fresh: Bool
    }

    /// One event of the running batch, in arrival order.
    struct Entry {
        var onboarding: UInt32
        var screen: UInt16
        var session: UInt32
        var timeBits: UInt64
        var seq: UInt64
        var body: Range<Int>
    }

    /// A sort key: the leading key field `a` and the entry's position `i`; the rest of the key, (time, seq),
    /// is read from the entry when needed.
    struct SortKey {
        var a: UInt64
        var i: Int
    }

    struct OnboardingAccumulator {
        var events: UInt64 = 0
        var minTime = Int64.max
        var maxTime = Int64.min
        var maxTotalScreens: UInt32 = 0
    }

    init(dbs: Databases) {
        self.dbs = dbs
        scratch = .allocate(byteCount: 1024, alignment: 8)
        chunk = .allocate(byteCount: Layout.batchChunk * Layout.eventKeySize, alignment: 8)
    }

    deinit {
        scratch.deallocate()
        chunk.deallocate()
    }

    // MARK: Transaction outcome

    func didCommit() {
        committedStrings = table.count
        knownNextSeq = nextSeq
        for (k, v) in pendingInfer { inferCache[k] = v }
        pendingInfer.removeAll(keepingCapacity: true)
        // Bounded memory: past a million pairs, forget them (a miss costs one NOOVERWRITE put).
        if knownPairs.count > 1 << 20 { knownPairs.removeAll() }
        pendingPairs.removeAll(keepingCapacity: true)
        txn = nil
    }

    func didAbort() {
        if table.count != committedStrings {
            table = StringTable(strings: Array(table.strings.prefix(committedStrings)))
        }
        nextSeq = knownNextSeq
        pendingInfer.removeAll(keepingCapacity: true)
        for pair in pendingPairs { knownPairs.remove(pair) }
        pendingPairs.removeAll(keepingCapacity: true)
        txn = nil
    }

    // MARK: Interning

    /// Interns through the in-memory table; a new string is written to `strings` and `string_ids` in
    /// the running transaction.
    func intern(_ string: String) throws -> StringID {
        let before = table.count
        let id = table.intern(string)
        if Int(id) == before {
            guard let txn else { preconditionFailure("intern outside a write transaction") }
            var be = id.bigEndian
            try string.withUTF8Bytes { bytes in
                try withUnsafeBytes(of: &be) { idBytes in
                    // Ids only grow, so every new id is the last key of `strings`.
                    try txn.put(dbs.strings, idBytes, bytes, flags: PutFlags.append)
                    let n = Layout.stringKey(bytes, into: scratch)
                    // A (2^-64) hash collision between two long strings keeps the first mapping; readers
                    // verify a looked-up id against `strings`.
                    try txn.put(dbs.stringIDs, UnsafeRawBufferPointer(start: scratch, count: n), idBytes,
                                flags: PutFlags.noOverwrite)
                }
            }
        }
        return id
    }

    /// Brings the caches up to date with the store: loads the dictionary on first use, and reloads what
    /// another process may have appended since this writer's last commit.
    private func refresh(_ txn: Transaction) throws {
        let storedNext = try txn.getUInt64(dbs.meta, Layout.metaNextSeq) ?? 0
        if loaded && storedNext == knownNextSeq { return }
        let have = loaded ? table.count : 0
        if !loaded { table = StringTable() }
        var bytes = UInt32(have).bigEndian
        try txn.withCursor(dbs.strings) { c in
            var found = try withUnsafeBytes(of: &bytes) { try c.seek($0) }
            var expected = UInt32(have)
            while found {
                guard c.key.count == 4, c.key.be32(0) == expected else {
                    throw StoreError(.corrupt, "the strings database is not dense at id \(expected)")
                }
                let s = String(decoding: c.value, as: UTF8.self)
                _ = table.intern(s)
                guard table.count == Int(expected) + 1 else {
                    throw StoreError(.corrupt, "string id \(expected) repeats an earlier string")
                }
                expected += 1
                found = try c.next()
            }
        }
        committedStrings = table.count
        inferCache.removeAll()
        loaded = true
        knownNextSeq = storedNext
        nextSeq = storedNext
    }

    // MARK: Append

    func append(_ events: UnsafeBufferPointer<Event>, checkpoint: Checkpoint?, txn: Transaction) throws -> AppendResult {
        self.txn = txn
        try refresh(txn)
        let firstSeq = nextSeq
        entries.removeAll(keepingCapacity: true)
        encoder.removeAll()
        onboardingStats.removeAll(keepingCapacity: true)
        var kindCounts = [UInt64](repeating: 0, count: EventKind.allCases.count)
        var duplicates = 0
        var inferredSessions: UInt64 = 0
        var minTime = Int64.max
        var maxTime = Int64.min
        let eventKey = scratch + 512

        var lastOnboarding: UInt32? = nil
        var current = OnboardingAccumulator()
        let base = events.baseAddress
        for index in 0..<events.count {
            // Fields are read through the pointer so that the event is not copied (a copy retains every string).
            let original = base! + index
            let time = original.pointee.time.microseconds
            let timeBits = Layout.timeBits(time)
            var idKeySize = 0
            if original.pointee.eventID != nil {
                idKeySize = original.pointee.eventID!.withUTF8Bytes { Layout.eventIDKey(timeBits: timeBits, id: $0, into: scratch) }
                if try txn.get(dbs.eventIDs, UnsafeRawBufferPointer(start: scratch, count: idKeySize)) != nil {
                    duplicates += 1
                    continue
                }
            }
            let seq = nextSeq
            var interner = self
            let record: EncodedRecord
            if original.pointee.session == nil {
                var event = original.pointee
                let (name, isNew) = try inferSession(for: event, seq: seq)
                event.session = name
                if isNew { inferredSessions += 1 }
                record = try encoder.appendBody(event, strings: &interner)
            } else {
                record = try encoder.appendBody(original.pointee, strings: &interner)
            }
            let onboarding = record.header.keyOnboarding
            let screen = record.header.keyScreenIndex
            let session = record.session!
            entries.append(Entry(onboarding: onboarding, screen: screen, session: session, timeBits: timeBits,
                                 seq: seq, body: record.range))
            nextSeq += 1

            if idKeySize > 0 {
                // The interner may have used `scratch` (it writes string keys there): rebuild the id key.
                idKeySize = original.pointee.eventID!.withUTF8Bytes { Layout.eventIDKey(timeBits: timeBits, id: $0, into: scratch) }
                EventKey(onboarding: onboarding, screen: screen, timeBits: timeBits, seq: seq).write(to: eventKey)
                try txn.put(dbs.eventIDs, UnsafeRawBufferPointer(start: scratch, count: idKeySize),
                            UnsafeRawBufferPointer(start: eventKey, count: Layout.eventKeySize))
            }
            let pair = UInt64(onboarding) << 32 | UInt64(session)
            if knownPairs.insert(pair).inserted {
                eventKey.storeBE(pair, at: 0)
                eventKey.storeBE(timeBits, at: 8)
                try txn.put(dbs.onboardingSessions, UnsafeRawBufferPointer(start: eventKey, count: 8),
                            UnsafeRawBufferPointer(start: eventKey + 8, count: 8), flags: PutFlags.noOverwrite)
                pendingPairs.append(pair)
            }
            kindCounts[kindIndex(original.pointee.payload.kind)] += 1
            minTime = min(minTime, time)
            maxTime = max(maxTime, time)
            if onboarding != lastOnboarding {
                if let lastOnboarding { onboardingStats[lastOnboarding] = current }
                current = onboardingStats[onboarding, default: OnboardingAccumulator()]
                lastOnboarding = onboarding
            }
            current.events += 1
            current.minTime = min(current.minTime, time)
            current.maxTime = max(current.maxTime, time)
            if let total = original.pointee.meta?.totalScreens {
                current.maxTotalScreens = max(current.maxTotalScreens, UInt32(clamping: total))
            }
        }
        if let lastOnboarding { onboardingStats[lastOnboarding] = current }

        try writeEvents(txn)
        try writeSessionIndex(txn)
        try writeBatches(txn)
        try writeInference(txn)
        try writeOnboardingStats(txn)
        try writeCounters(txn, kindCounts: kindCounts, duplicates: UInt64(duplicates), inferred: inferredSessions,
                          minTime: minTime, maxTime: maxTime)
        if let checkpoint {
            try checkpoint.key.withUTF8Bytes { k in
                try checkpoint.value.withUnsafeBytes { v in try txn.put(dbs.checkpoints, k, v) }
            }
        }
        return AppendResult(appended: entries.count, duplicates: duplicates, seqs: firstSeq..<nextSeq)
    }

    @inline(__always)
    private func kindIndex(_ kind: EventKind) -> Int {
        switch kind {
        case .analytics: 0
        case .stateUpdated: 1
        case .openPaywall: 2
        case .custom: 3
        case .close: 4
        case .onboardingLoaded: 5
        case .error: 6
        }
    }

    /// Sorts ``order`` into (a, time, seq) order.
    ///
    /// A stable radix sort on `a` keeps arrival order among equal `a`s, and arrival order is seq order;
    /// when times also never decrease within a group (events arriving in time order, the common case),
    /// that is already (a, time, seq) order. Otherwise a comparison sort finishes the job.
    /// - Complexity: O(n · bytes of the largest `a`), or O(n log n) for out-of-order times.
    private func sortOrder() {
        let n = order.count
        guard n > 1 else { return }
        var maxA: UInt64 = 0
        for k in order { maxA |= k.a }
        let passes = (64 - maxA.leadingZeroBitCount + 7) / 8
        if sortBuffer.count != n { sortBuffer = order }
        for pass in 0..<passes {
            let shift = UInt64(pass * 8)
            for b in 0..<256 { histogram[b] = 0 }
            for k in order { histogram[Int((k.a >> shift) & 0xFF)] += 1 }
            var sum = 0
            for b in 0..<256 {
                let c = histogram[b]
                histogram[b] = sum
                sum += c
            }
            for k in order {
                let b = Int((k.a >> shift) & 0xFF)
                sortBuffer[histogram[b]] = k
                histogram[b] += 1
            }
            swap(&order, &sortBuffer)
        }
        var sorted = true
        for j in 1..<n where order[j - 1].a == order[j].a {
            if entries[order[j - 1].i].timeBits > entries[order[j].i].timeBits {
                sorted = false
                break
            }
        }
        if !sorted {
            order.sort { x, y in
                if x.a != y.a { return x.a < y.a }
                let ex = entries[x.i], ey = entries[y.i]
                if ex.timeBits != ey.timeBits { return ex.timeBits < ey.timeBits }
                return ex.seq < ey.seq
            }
        }
    }

    /// `events`: bodies under (onboarding, screen, time, seq), inserted in key order. Sorting the batch
    /// first makes consecutive puts land on the same leaf pages (see the measurements in docs/storage.md).
    private func writeEvents(_ txn: Transaction) throws {
        order.removeAll(keepingCapacity: true)
        for (i, e) in entries.enumerated() {
            order.append(SortKey(a: UInt64(e.onboarding) << 16 | UInt64(e.screen), i: i))
        }
        sortOrder()
        let key = scratch
        try encoder.withUnsafeBytes { bodies in
            try txn.withCursor(dbs.events) { c in
                for k in order {
                    let e = entries[k.i]
                    EventKey(onboarding: e.onboarding, screen: e.screen, timeBits: e.timeBits, seq: e.seq).write(to: key)
                    try c.put(UnsafeRawBufferPointer(start: key, count: Layout.eventKeySize),
                              UnsafeRawBufferPointer(rebasing: bodies[e.body]))
                }
            }
        }
    }

    /// `sessions`: (session, time, seq) → (onboarding, screen), in key order.
    private func writeSessionIndex(_ txn: Transaction) throws {
        order.removeAll(keepingCapacity: true)
        for (i, e) in entries.enumerated() {
            order.append(SortKey(a: UInt64(e.session), i: i))
        }
        sortOrder()
        let key = scratch
        let value = scratch + 64
        try txn.withCursor(dbs.sessions) { c in
            for k in order {
                let e = entries[k.i]
                key.storeBE(e.session, at: 0)
                key.storeBE(e.timeBits, at: 4)
                key.storeBE(e.seq, at: 12)
                value.storeBE(e.onboarding, at: 0)
                value.storeBE(e.screen, at: 4)
                try c.put(UnsafeRawBufferPointer(start: key, count: Layout.sessionKeySize),
                          UnsafeRawBufferPointer(start: value, count: Layout.sessionValueSize))
            }
        }
    }

    /// `batches`: the batch's event keys in seq order, ``Layout/batchChunk`` per entry, appended.
    private func writeBatches(_ txn: Transaction) throws {
        var start = 0
        let key = scratch
        while start < entries.count {
            let end = min(start + Layout.batchChunk, entries.count)
            for i in start..<end {
                let e = entries[i]
                EventKey(onboarding: e.onboarding, screen: e.screen, timeBits: e.timeBits, seq: e.seq)
                    .write(to: chunk + (i - start) * Layout.eventKeySize)
            }
            key.storeBE(entries[start].seq, at: 0)
            guard try txn.put(dbs.batches, UnsafeRawBufferPointer(start: key, count: 8),
                              UnsafeRawBufferPointer(start: chunk, count: (end - start) * Layout.eventKeySize),
                              flags: PutFlags.append)
            else {
                throw StoreError(.corrupt, "the batches database already has entries past seq \(entries[start].seq)")
            }
            start = end
        }
    }

    // MARK: Session inference

    /// The session of an event that has none (semantics rule 10): per (profile, onboarding), a new one
    /// starts at the first event, after 30 minutes without events, or at a start event
    /// (`onboarding_loaded`, `onboarding_started`) once the current session has seen other events.
    /// Events are taken in arrival order; one older than the session's last event joins it.
    private func inferSession(for event: Event, seq: UInt64) throws -> (String, Bool) {
        let me = self
        let profile = try event.profile.map { try me.intern($0) } ?? RecordFormat.absent
        let onboarding = try event.meta.map { try me.intern($0.onboardingID) } ?? RecordFormat.noOnboarding
        let key = UInt64(profile) << 32 | UInt64(onboarding)
        let time = event.time.microseconds
        let isStart: Bool
        switch event.payload {
        case .onboardingLoaded, .analytics(.onboardingStarted): isStart = true
        default: isStart = false
        }
        var state = pendingInfer[key] ?? inferCache[key]
        if state == nil, let txn {
            scratch.storeBE(key, at: 0)
            if let v = try txn.get(dbs.inferred, UnsafeRawBufferPointer(start: scratch, count: 8)) {
                guard v.count == 13 else { throw StoreError(.corrupt, "an inferred-session entry is \(v.count) bytes, not 13") }
                state = InferState(session: v.be32(0), lastTime: Layout.time(fromBits: v.be64(4)), fresh: v[12] != 0)
            }
        }
        if var current = state, time &- current.lastTime < Layout.sessionGap, !(isStart && !current.fresh),
           let name = table.string(for: current.session)
        {
            current.lastTime = max(current.lastTime, time)
            current.fresh = current.fresh && isStart
            pendingInfer[key] = current
            return (name, false)
        }
        let name = "inferred:\(seq)"
        let id = try intern(name)
        pendingInfer[key] = InferState(session: id, lastTime: time, fresh: isStart)
        return (name, true)
    }

    private func writeInference(_ txn: Transaction) throws {
        let key = scratch
        let value = scratch + 16
        for (k, state) in pendingInfer {
            key.storeBE(k, at: 0)
            value.storeBE(state.session, at: 0)
            value.storeBE(Layout.timeBits(state.lastTime), at: 4)
            value.storeBytes(of: state.fresh ? 1 : 0, toByteOffset: 12, as: UInt8.self)
            try txn.put(dbs.inferred, UnsafeRawBufferPointer(start: key, count: 8), UnsafeRawBufferPointer(start: value, count: 13))
        }
    }

    // MARK: Counters

    /// `onboardings`: onboarding → events (8) ‖ min time (8) ‖ max time (8) ‖ max total screens (4).
    private func writeOnboardingStats(_ txn: Transaction) throws {
        let key = scratch
        let value = scratch + 16
        for (onboarding, add) in onboardingStats {
            key.storeBE(onboarding, at: 0)
            let k = UnsafeRawBufferPointer(start: key, count: 4)
            var total = add
            if let v = try txn.get(dbs.onboardings, k) {
                let old = try OnboardingSummaryRecord(v)
                total.events += old.events
                total.minTime = min(total.minTime, old.minTime)
                total.maxTime = max(total.maxTime, old.maxTime)
                total.maxTotalScreens = max(total.maxTotalScreens, old.maxTotalScreens)
            }
            value.storeBE(total.events, at: 0)
            value.storeBE(Layout.timeBits(total.minTime), at: 8)
            value.storeBE(Layout.timeBits(total.maxTime), at: 16)
            value.storeBE(total.maxTotalScreens, at: 24)
            try txn.put(dbs.onboardings, k, UnsafeRawBufferPointer(start: value, count: OnboardingSummaryRecord.size))
        }
    }

    private func writeCounters(_ txn: Transaction, kindCounts: [UInt64], duplicates: UInt64, inferred: UInt64,
                               minTime: Int64, maxTime: Int64) throws {
        func add(_ key: String, _ n: UInt64) throws {
            if n == 0 { return }
            try txn.putUInt64(dbs.meta, key, (try txn.getUInt64(dbs.meta, key) ?? 0) &+ n)
        }
        try txn.putUInt64(dbs.meta, Layout.metaNextSeq, nextSeq)
        try add(Layout.metaEvents, UInt64(entries.count))
        try add(Layout.metaDuplicates, duplicates)
        try add(Layout.metaInferredSessions, inferred)
        for (i, kind) in EventKind.allCases.enumerated() { try add(Layout.metaKind(kind), kindCounts[i]) }
        if !entries.isEmpty {
            let oldMin = try txn.getUInt64(dbs.meta, Layout.metaMinTime).map { Layout.time(fromBits: $0) } ?? .max
            let oldMax = try txn.getUInt64(dbs.meta, Layout.metaMaxTime).map { Layout.time(fromBits: $0) } ?? .min
            try txn.putUInt64(dbs.meta, Layout.metaMinTime, Layout.timeBits(min(oldMin, minTime)))
            try txn.putUInt64(dbs.meta, Layout.metaMaxTime, Layout.timeBits(max(oldMax, maxTime)))
        }
    }
}

/// The decoded value of an `onboardings` entry.
struct OnboardingSummaryRecord {
    static let size = 28
    var events: UInt64
    var minTime: Int64
    var maxTime: Int64
    var maxTotalScreens: UInt32

    init(_ v: UnsafeRawBufferPointer) throws {
        guard v.count == OnboardingSummaryRecord.size else {
            throw StoreError(.corrupt, "an onboardings entry is \(v.count) bytes, not \(OnboardingSummaryRecord.size)")
        }
        events = v.be64(0)
        minTime = Layout.time(fromBits: v.be64(8))
        maxTime = Layout.time(fromBits: v.be64(16))
        maxTotalScreens = v.be32(24)
    }
}
