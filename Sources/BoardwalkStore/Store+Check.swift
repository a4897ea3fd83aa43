import BoardwalkCodec
import BoardwalkModel

/// What ``Store/check()`` found.
public struct CheckReport: Sendable, CustomStringConvertible {
    /// The first problems found (at most ``maxListed``), each a sentence naming the database and key.
    public var problems: [String] = []
    /// How many problems were found in all.
    public var problemCount = 0
    /// Events read from the `events` database.
    public var eventsChecked = 0
    /// Blocks read from the `events` database.
    public var blocksChecked = 0
    /// Problems beyond this many are counted, not listed.
    public static let maxListed = 100

    /// Whether the store is consistent.
    public var isOK: Bool { problemCount == 0 }

    mutating func add(_ problem: String) {
        problemCount += 1
        if problems.count < CheckReport.maxListed { problems.append(problem) }
    }

    public var description: String {
        if isOK { return "ok: \(eventsChecked) events checked" }
        // When the B-tree pages are damaged the check stops before reading events: "in 0 events" would read as an
        // empty store.
        let scope = eventsChecked > 0 ? "in \(eventsChecked) events checked" : "(found before any event could be read)"
        var lines = ["\(problemCount) problem(s) \(scope):"]
        lines += problems.map { "  " + $0 }
        if problemCount > problems.count { lines.append("  … and \(problemCount - problems.count) more") }
        return lines.joined(separator: "\n")
    }
}

extension Store {
    /// Verifies the store: LMDB's B-tree pages are sound (read from the file, before any cursor touches them: a
    /// damaged page would crash liblmdb, so the check stops there and reports it); every block and every record in
    /// it decodes; every index entry (`sessions`,
    /// `batches`, `onboarding_sessions`) points to an existing event and every event has its entries;
    /// `strings` is dense without repeats; the counters in `meta` and `onboardings` match what is stored.
    /// Runs in one read transaction, concurrently with writers.
    ///
    /// - Returns: a report listing what is wrong; damage never traps.
    /// - Throws: ``LMDBError`` only when LMDB itself cannot be read.
    /// - Complexity: O(N) for N events plus O(log N) per block; memory O(N) (9 bytes per seq) plus
    ///   O(sessions + strings).
    public func check() throws -> CheckReport {
        // LMDB's own pages first, read from the file: liblmdb trusts them, and a cursor over a damaged branch or leaf
        // page can assert or read out of bounds. Nothing else runs on damaged trees. The walk needs its snapshot's
        // meta page, which another process's commits can overwrite: it tries again with a new snapshot.
        var report = CheckReport()
        guard let problems = try readRetryingPagesMoved({ try $0.txn.checkPages() }) else {
            report.add("LMDB pages: not checked: another process committed faster than the check could read the meta "
                       + "pages, 100 times; run check again when appends pause")
            return report
        }
        for problem in problems { report.add("LMDB pages: " + problem) }
        if !report.isOK { return report }
        return try read { snapshot in try snapshot.check() }
    }

    /// ``read(_:)`` for a body that walks LMDB's pages (``Transaction/checkPages(limit:mainOnly:trees:)``), which
    /// needs its snapshot's meta page: another process's commits can overwrite it (``PagesMoved``), and the body runs
    /// again in a new snapshot, up to 100 times; `nil` when every try met that.
    func readRetryingPagesMoved<R>(_ body: (Snapshot) throws -> R) throws -> R? {
        for _ in 0..<100 {
            do {
                return try read(body)
            } catch is PagesMoved {
                continue
            }
        }
        return nil
    }
}

extension Snapshot {
    func check() throws -> CheckReport {
        var report = CheckReport()
        checkFormat(&report)
        try checkStrings(&report)

        // Seqs are dense in 0..<next_seq (duplicates take none), so per-seq facts fit arrays indexed by seq:
        // a fingerprint of what `events` says about the event, and which databases list it.
        let nextSeq = try txn.getUInt64(dbs.meta, Layout.metaNextSeq) ?? 0
        let entries = try txn.entries(dbs.events) + txn.entries(dbs.eventLog)
        // A damaged next_seq must not make check() allocate without bound: blocks hold at most
        // Layout.maxBlockEvents each.
        guard nextSeq <= UInt64(entries) * UInt64(Layout.maxBlockEvents) + 1, nextSeq < 1 << 40 else {
            report.add("meta: next_seq \(nextSeq) is implausible for \(entries) blocks")
            return report
        }
        var fingerprints = [UInt64](repeating: 0, count: Int(nextSeq))
        var listed = [UInt8](repeating: 0, count: Int(nextSeq))
        let inEvents: UInt8 = 1, inSessions: UInt8 = 2, inBatches: UInt8 = 4

        // events → counters, pairs and fingerprints.
        var kinds = [EventKind: UInt64]()
        var perOnboarding: [UInt32: (events: UInt64, min: Int64, max: Int64, screens: UInt32)] = [:]
        var pairs = Set<UInt64>()
        var minTime = Int64.max
        var maxTime = Int64.min
        var events: UInt64 = 0
        // One block of `events` (`batch == nil`) or of the event log's batch starting at `batch` (its events' seqs
        // must lie from there to the next logged batch).
        func checkBlock(_ key: EventKey, _ value: UnsafeRawBufferPointer, batch: (first: UInt64, end: UInt64)?) {
            let db = batch == nil ? "events" : "event_log"
            report.blocksChecked += 1
            do {
                var block = try blockReader(key, value)
                if block.lastTime &- block.firstTime >= Layout.blockSpan {
                    report.add("\(db): the block at seq \(key.seq) spans \(block.lastTime &- block.firstTime) µs, more than a block may")
                }
                while try advance(&block, key) {
                    events += 1
                    report.eventsChecked += 1
                    let seq = block.seq
                    if let batch, seq < batch.first || seq >= batch.end {
                        report.add("event_log: the block at seq \(key.seq) of the batch at seq \(batch.first) holds seq \(seq), "
                                   + "outside its batch")
                    }
                    let record: RecordView
                    do {
                        record = try recordView(key, block, stringLimit: stringCount)
                    } catch {
                        // recordView's error already names the seq, onboarding and screen.
                        report.add("\(db): \(error)")
                        continue
                    }
                    kinds[record.kind, default: 0] += 1
                    let time = block.time
                    minTime = min(minTime, time)
                    maxTime = max(maxTime, time)
                    var o = perOnboarding[key.onboarding] ?? (0, .max, .min, 0)
                    o.events += 1
                    o.min = min(o.min, time)
                    o.max = max(o.max, time)
                    if let total = record.totalScreens { o.screens = max(o.screens, UInt32(clamping: total)) }
                    perOnboarding[key.onboarding] = o
                    guard let session = record.session else {
                        report.add("\(db): seq \(seq) has no session")
                        continue
                    }
                    pairs.insert(UInt64(key.onboarding) << 32 | UInt64(session))
                    guard seq < nextSeq else {
                        report.add("\(db): seq \(seq) is not below meta next_seq \(nextSeq)")
                        continue
                    }
                    if listed[Int(seq)] & inEvents != 0 { report.add("\(db): seq \(seq) is stored twice") }
                    listed[Int(seq)] |= inEvents
                    fingerprints[Int(seq)] = fingerprint(session: session, onboarding: key.onboarding, screen: key.screen, time: time)
                }
            } catch {
                report.add("\(db): \(error)")
            }
        }
        try txn.withCursor(dbs.events) { c in
            var found = try c.first()
            while found {
                if let key = EventKey(c.key) {
                    checkBlock(key, c.value, batch: nil)
                } else {
                    report.blocksChecked += 1
                    report.add("events: a key of \(c.key.count) bytes (expected \(Layout.eventKeySize))")
                }
                found = try c.next()
            }
        }
        // The event log's batches: each holds the seqs from its first to the next batch's (the last one's to next_seq).
        var logBatches: [UInt64] = []
        try txn.withCursor(dbs.eventLog) { c in
            var found = try c.first()
            while found {
                if c.key.count == Layout.eventLogKeySize, logBatches.last != c.key.be64(0) { logBatches.append(c.key.be64(0)) }
                found = try c.next()
            }
        }
        try txn.withCursor(dbs.eventLog) { c in
            var found = try c.first()
            var index = 0
            while found {
                guard let (first, key) = EventKey.logKey(c.key) else {
                    report.blocksChecked += 1
                    report.add("event_log: a key of \(c.key.count) bytes (expected \(Layout.eventLogKeySize))")
                    found = try c.next()
                    continue
                }
                while index + 1 < logBatches.count, logBatches[index] != first { index += 1 }
                let end = index + 1 < logBatches.count ? logBatches[index + 1] : nextSeq
                checkBlock(key, c.value, batch: (first, end))
                found = try c.next()
            }
        }

        try checkSessionIndex(&report, fingerprints: fingerprints, listed: &listed, mark: inSessions)
        try checkBatches(&report, listed: &listed, mark: inBatches)
        var missingSessions = 0, missingBatches = 0
        for seq in listed.indices where listed[seq] & inEvents != 0 {
            if listed[seq] & inSessions == 0 {
                missingSessions += 1
                if missingSessions <= 10 { report.add("sessions: no entry for seq \(seq)") }
            }
            if listed[seq] & inBatches == 0 {
                missingBatches += 1
                if missingBatches <= 10 { report.add("batches: seq \(seq) is not listed") }
            }
        }
        if missingSessions > 10 { report.add("sessions: \(missingSessions) events in all have no entry") }
        if missingBatches > 10 { report.add("batches: \(missingBatches) events in all are not listed") }
        try checkOnboardingSessions(&report, pairs: pairs)
        try checkSpanningSessions(&report, pairs: pairs)

        // Counters.
        func expect(_ name: String, _ stored: UInt64?, _ actual: UInt64) {
            if (stored ?? 0) != actual { report.add("meta: \(name) is \(stored ?? 0), but \(actual) are stored") }
        }
        expect(Layout.metaEvents, try txn.getUInt64(dbs.meta, Layout.metaEvents), events)
        expect(Layout.metaSessions, try txn.getUInt64(dbs.meta, Layout.metaSessions),
               UInt64(Set(pairs.map { UInt32(truncatingIfNeeded: $0) }).count))
        for kind in EventKind.allCases {
            expect(Layout.metaKind(kind), try txn.getUInt64(dbs.meta, Layout.metaKind(kind)), kinds[kind] ?? 0)
        }
        if events > 0 {
            let storedMin = try txn.getUInt64(dbs.meta, Layout.metaMinTime).map { Layout.time(fromBits: $0) }
            let storedMax = try txn.getUInt64(dbs.meta, Layout.metaMaxTime).map { Layout.time(fromBits: $0) }
            if storedMin != minTime || storedMax != maxTime {
                report.add("meta: time range \(String(describing: storedMin))...\(String(describing: storedMax)) but events span \(minTime)...\(maxTime)")
            }
        }
        var onboardingEntries = 0
        try txn.withCursor(dbs.onboardings) { c in
            var found = try c.first()
            while found {
                onboardingEntries += 1
                guard c.key.count == 4, let r = try? OnboardingSummaryRecord(c.value) else {
                    report.add("onboardings: an entry has a \(c.key.count)-byte key and a \(c.value.count)-byte value")
                    found = try c.next()
                    continue
                }
                let id = c.key.be32(0)
                if let o = perOnboarding[id] {
                    if o.events != r.events || o.min != r.minTime || o.max != r.maxTime || o.screens != r.maxTotalScreens {
                        report.add("onboardings: \(id) says \(r.events) events, \(r.minTime)...\(r.maxTime), \(r.maxTotalScreens) screens; events hold \(o.events), \(o.min)...\(o.max), \(o.screens)")
                    }
                } else {
                    report.add("onboardings: \(id) has counters but no events")
                }
                found = try c.next()
            }
        }
        if onboardingEntries != perOnboarding.count {
            report.add("onboardings: \(onboardingEntries) entries, but events have \(perOnboarding.count) onboardings")
        }
        return report
    }

    /// What the session index must agree with: session, onboarding, screen and time of one event.
    private func fingerprint(session: UInt32, onboarding: UInt32, screen: UInt16, time: Int64) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15
        for v in [UInt64(session), UInt64(onboarding) << 16 | UInt64(screen), UInt64(bitPattern: time)] {
            h = (h ^ v) &* 0xBF58_476D_1CE4_E5B9
            h ^= h >> 31
        }
        return h | 1  // never 0, which marks "no event"
    }

    private func checkFormat(_ report: inout CheckReport) {
        do {
            let format = try txn.getUInt32(dbs.meta, Layout.metaFormat)
            if format != Layout.formatVersion { report.add("meta: format is \(String(describing: format))") }
        } catch {
            report.add("meta: format: \(error)")
        }
    }

    /// `strings` chunks decode, their ids are dense from 0, and no string repeats (the readers' table relies on
    /// all three).
    private func checkStrings(_ report: inout CheckReport) throws {
        // A table that hashes and compares bytes, as the writer's and readers' do: a `Set<String>` would call two
        // canonically equivalent strings (a composed and a decomposed "é") one.
        var seen = StringTable()
        do {
            try StringChunks.forEach(in: txn, dbs, from: 0) { id, entry in
                if !seen.insert(entry.string).inserted { report.add("strings: id \(id) repeats an earlier string") }
                return true
            }
        } catch let error as StoreError where error.kind == .corrupt {
            report.add("strings: \(error)")
        }
    }

    /// Every `sessions` value and every `session_log` segment decodes (every run and entry, in order), and lists
    /// events of the sessions of its bucket, each with the onboarding, screen and time `events` has for it, and no
    /// event twice (in either).
    private func checkSessionIndex(_ report: inout CheckReport, fingerprints: [UInt64], listed: inout [UInt8], mark: UInt8) throws {
        func check(_ place: String, bucket: UInt32, keySeq: UInt64, _ bytes: UnsafeRawBufferPointer) {
            do {
                var reader = try sessionBucketReader(bucket: bucket, keySeq: keySeq, bytes)
                while try reader.nextRun(bucket: bucket, keySeq: keySeq) {
                    let session = bucket << Layout.sessionBucketShift | reader.low
                    while try reader.nextEntry(bucket: bucket, keySeq: keySeq) {
                        let seq = reader.seq
                        guard seq < UInt64(listed.count), fingerprints[Int(seq)] != 0 else {
                            report.add("\(place): seq \(seq) (session \(session)) is not in events")
                            continue
                        }
                        if fingerprints[Int(seq)] != fingerprint(session: session, onboarding: reader.onboarding, screen: reader.screen, time: reader.time) {
                            report.add("\(place): seq \(seq) is listed under session \(session), onboarding \(reader.onboarding), screen \(reader.screen), time \(reader.time), but the event with that seq in events has another session, onboarding, screen or time")
                        }
                        if listed[Int(seq)] & mark != 0 { report.add("\(place): seq \(seq) is listed twice") }
                        listed[Int(seq)] |= mark
                    }
                }
                // A segment's base is its first entry (the fold keys new values by it, so a wrong one would collide).
                try? SessionBucketSegment.forEach(in: bytes, keySeq: keySeq, lowLimit: Layout.sessionBucketWidth) { segment in
                    var alone: [UInt8] = []
                    segment.append(keySeq: segment.baseSeq, to: &alone)
                    try alone.withUnsafeBytes { b in
                        var first = try SessionBucketReader(b, keySeq: segment.baseSeq, lowLimit: Layout.sessionBucketWidth)
                        if try first.nextRun(), try first.nextEntry(), first.time != segment.baseTime || first.seq != segment.baseSeq {
                            report.add("\(place): a segment of bucket \(bucket) (key seq \(keySeq)) has base seq \(segment.baseSeq) and time "
                                       + "\(segment.baseTime), but its first entry is seq \(first.seq) at \(first.time)")
                        }
                    }
                }
            } catch let error as StoreError {
                report.add("\(place): \(error)")
            } catch {
                report.add("\(place): \(error)")
            }
        }
        try txn.withCursor(dbs.sessions) { c in
            var found = try c.first()
            while found {
                if c.key.count == Layout.sessionKeySize {
                    check("sessions", bucket: c.key.be32(0), keySeq: c.key.be64(4), c.value)
                } else {
                    report.add("sessions: a key is \(c.key.count) bytes, not \(Layout.sessionKeySize)")
                }
                found = try c.next()
            }
        }
        // The log's chunks one by one, so that a damaged chunk is reported and the others still checked.
        let nextSeq = (try? txn.getUInt64(dbs.meta, Layout.metaNextSeq)) ?? nil
        try txn.withCursor(dbs.sessionLog) { c in
            var found = try c.first()
            // The previous chunk's batch and last bucket: a chunk's buckets must all be past it (readers look for a
            // bucket only in the last chunk starting at or below it).
            var lastKey: (UInt64, UInt32)? = nil
            while found {
                guard c.key.count == Layout.sessionLogKeySize else {
                    report.add("session_log: a key is \(c.key.count) bytes, not \(Layout.sessionLogKeySize)")
                    found = try c.next()
                    continue
                }
                let seq = c.key.be64(0), first = c.key.be32(8)
                if let nextSeq, seq >= nextSeq { report.add("session_log: the chunk of batch \(seq) is at or past next_seq \(nextSeq)") }
                if let (lastSeq, lastBucket) = lastKey, lastSeq == seq, first <= lastBucket {
                    report.add("session_log: the chunk of batch \(seq) at bucket \(first) starts at or before the bucket "
                               + "\(lastBucket) the chunk before ends with")
                }
                lastKey = (seq, first)
                do {
                    var reader = try SessionLog.reader(c.value, seq: seq, bucket: first)
                    while let entry = try SessionLog.next(&reader, seq: seq, bucket: first) {
                        lastKey = (seq, entry.bucket)
                        check("session_log", bucket: entry.bucket, keySeq: seq, entry.segment)
                    }
                } catch let error as StoreError {
                    report.add("session_log: \(error)")
                }
                found = try c.next()
            }
        }
    }

    /// `batches` entries tile the seqs in increasing order, each block a batch lists holds some of its seqs,
    /// and every seq is claimed by exactly one batch (a grown block is listed by every batch it holds).
    private func checkBatches(_ report: inout CheckReport, listed: inout [UInt8], mark: UInt8) throws {
        var end: UInt64 = 0
        let logBatches = (try? EventLog.batches(txn, dbs)) ?? []
        try txn.withCursor(dbs.batches) { c in
            var found = try c.first()
            var current: (first: UInt64, count: UInt64, chunk: UInt16)? = nil
            while found {
                guard c.key.count == Layout.batchKeySize, c.value.count >= 4 + Layout.eventKeySize,
                      (c.value.count - 4) % Layout.eventKeySize == 0 else {
                    report.add("batches: an entry has a \(c.key.count)-byte key and a \(c.value.count)-byte value")
                    found = try c.next()
                    continue
                }
                let first = c.key.be64(0)
                let chunk = c.key.be16(8)
                let count = UInt64(c.value.be32(0))
                if let cur = current, cur.first == first {
                    if chunk != cur.chunk &+ 1 || count != cur.count { report.add("batches: batch \(first) chunk \(chunk) disagrees with the one before") }
                } else {
                    if chunk != 0 { report.add("batches: batch \(first) starts at chunk \(chunk)") }
                    if first < end { report.add("batches: batch \(first) overlaps the one before (which ends at \(end))") }
                    end = first &+ count
                }
                current = (first, count, chunk)
                var offset = 4
                while offset < c.value.count {
                    let key = EventKey(UnsafeRawBufferPointer(rebasing: c.value[offset..<offset + Layout.eventKeySize]))!
                    offset += Layout.eventKeySize
                    guard let value = try txn.block(key, ofBatch: first, logBatches: logBatches, dbs) else {
                        report.add("batches: the block at seq \(key.seq) is not in \(EventLog.database(ofBatch: first, logBatches: logBatches))")
                        continue
                    }
                    do {
                        // A grown block holds events of several batches: this batch claims the seqs in its
                        // range, and must find at least one there.
                        var block = try blockReader(key, value)
                        var own = 0
                        while try advance(&block, key) {
                            let seq = block.seq
                            guard seq >= first && seq < first &+ count else { continue }
                            own += 1
                            if seq < UInt64(listed.count) {
                                if listed[Int(seq)] & mark != 0 { report.add("batches: seq \(seq) is listed twice") }
                                listed[Int(seq)] |= mark
                            }
                        }
                        if own == 0 { report.add("batches: batch \(first) lists the block at seq \(key.seq), which holds none of its events") }
                    } catch {
                        // Reported with the events database.
                    }
                }
                found = try c.next()
            }
        }
    }

    /// `onboarding_sessions` lists exactly the (onboarding, session) pairs of the events, each once, in chunks
    /// that decode and do not overlap.
    private func checkOnboardingSessions(_ report: inout CheckReport, pairs: Set<UInt64>) throws {
        var seen = 0, stray = 0
        try txn.withCursor(dbs.onboardingSessions) { c in
            var found = try c.first()
            var previous: UInt64? = nil
            while found {
                guard c.key.count == Layout.onboardingSessionKeySize else {
                    report.add("onboarding_sessions: a key is \(c.key.count) bytes, not \(Layout.onboardingSessionKeySize)")
                    found = try c.next()
                    continue
                }
                let onboarding = c.key.be32(0), first = c.key.be32(4)
                do {
                    try OnboardingSessions.forEachEntry(c, key: (onboarding, first)) { session, _ in
                        let pair = UInt64(onboarding) << 32 | UInt64(session)
                        if let previous, pair <= previous {
                            report.add("onboarding_sessions: onboarding \(onboarding) lists session \(session) out of order "
                                       + "(in the chunk at session \(first))")
                        }
                        previous = pair
                        seen += 1
                        if !pairs.contains(pair) {
                            stray += 1
                            if stray <= 10 {
                                report.add("onboarding_sessions: onboarding \(onboarding) lists session \(session), which has no events in it")
                            }
                        }
                    }
                } catch let error as StoreError {
                    report.add("onboarding_sessions: \(error)")
                }
                found = try c.next()
            }
        }
        if stray > 10 { report.add("onboarding_sessions: \(stray) listed sessions in all have no events in their onboarding") }
        if seen != pairs.count { report.add("onboarding_sessions: \(seen) pairs listed for \(pairs.count) pairs in the events") }
    }
}
