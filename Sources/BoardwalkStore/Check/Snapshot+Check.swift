import BoardwalkCodec
import BoardwalkModel

extension Snapshot {
    func check() throws -> CheckReport {
        var report = CheckReport()
        checkFormat(&report)
        // Every later step reads these values and would stop at the first damaged one: they are listed first, all.
        if try !checkSeals(&report) { return report }
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
        var profilePairs = Set<UInt64>()
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
                    report.add(
                        "\(db): the block at seq \(key.seq) spans \(block.lastTime &- block.firstTime) µs, more than a block may"
                    )
                }
                // Per kind code and unknown name (``kindKey``), the events.
                var kindCodes: [UInt64: Int] = [:]
                defer {
                    // Only a writer's error could make them differ: the checksum covers the header.
                    let stored = Dictionary(
                        uniqueKeysWithValues: block.kindCounts.map { (kindKey($0.code, $0.name), $0.count) })
                    if block.index == block.count, stored != kindCodes {
                        report.add(
                            "\(db): the block at seq \(key.seq) counts its events by kind as \(codeList(stored)), "
                                + "but its events are \(codeList(kindCodes))")
                    }
                }
                while try advance(&block, key) {
                    let kind = RecordFormat.kindCode(body: block.body)
                    kindCodes[kindKey(kind.code, kind.name), default: 0] += 1
                    events += 1
                    report.eventsChecked += 1
                    let seq = block.seq
                    if let batch, seq < batch.first || seq >= batch.end {
                        report.add(
                            "event_log: the block at seq \(key.seq) of the batch at seq \(batch.first) holds seq \(seq), "
                                + "outside its batch")
                    }
                    let record: RecordView
                    do {
                        record = try recordView(key, block, stringLimit: stringCount)
                    } catch {
                        // recordView's error already names the seq, onboarding and screen.
                        report.add("\(db): \(naming(error))")
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
                    if let profile = record.profile { profilePairs.insert(UInt64(profile) << 32 | UInt64(session)) }
                    guard seq < nextSeq else {
                        report.add("\(db): seq \(seq) is not below meta next_seq \(nextSeq)")
                        continue
                    }
                    if listed[Int(seq)] & inEvents != 0 { report.add("\(db): seq \(seq) is stored twice") }
                    listed[Int(seq)] |= inEvents
                    fingerprints[Int(seq)] = fingerprint(
                        session: session, onboarding: key.onboarding, screen: key.screen, time: time)
                }
            } catch {
                report.add("\(db): \(naming(error))")
            }
        }
        // A kind code and the reference of an unknown analytics name (absent for any other code), as one key.
        func kindKey(_ code: UInt8, _ name: StringID) -> UInt64 { UInt64(code) << 32 | UInt64(name) }
        // Kind codes and counts, in code order, as `0x1: 5, 0xf (string 12): 1, 0x10: 2`.
        func codeList(_ counts: [UInt64: Int]) -> String {
            counts.sorted { $0.key < $1.key }.map {
                let name = StringID(truncatingIfNeeded: $0.key)
                return "0x" + String($0.key >> 32, radix: 16) + (name == RecordFormat.absent ? "" : " (string \(name))")
                    + ": \($0.value)"
            }.joined(separator: ", ")
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
                if c.key.count == Layout.eventLogKeySize, logBatches.last != c.key.be64(0) {
                    logBatches.append(c.key.be64(0))
                }
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

        try checkBlockHeads(&report)
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
        try checkSessionNames(
            &report, sessions: Set(pairs.map { UInt32(truncatingIfNeeded: $0) }), profilePairs: profilePairs)

        // Counters.
        func expect(_ name: String, _ stored: UInt64?, _ actual: UInt64) {
            if (stored ?? 0) != actual { report.add("meta: \(name) is \(stored ?? 0), but \(actual) are stored") }
        }
        expect(Layout.metaEvents, try txn.getUInt64(dbs.meta, Layout.metaEvents), events)
        expect(
            Layout.metaSessions, try txn.getUInt64(dbs.meta, Layout.metaSessions),
            UInt64(Set(pairs.map { UInt32(truncatingIfNeeded: $0) }).count))
        for kind in EventKind.allCases {
            expect(Layout.metaKind(kind), try txn.getUInt64(dbs.meta, Layout.metaKind(kind)), kinds[kind] ?? 0)
        }
        if events > 0 {
            let storedMin = try txn.getUInt64(dbs.meta, Layout.metaMinTime).map { Layout.time(fromBits: $0) }
            let storedMax = try txn.getUInt64(dbs.meta, Layout.metaMaxTime).map { Layout.time(fromBits: $0) }
            if storedMin != minTime || storedMax != maxTime {
                report.add(
                    "meta: time range \(String(describing: storedMin))...\(String(describing: storedMax)) but events span \(minTime)...\(maxTime)"
                )
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
                    if o.events != r.events || o.min != r.minTime || o.max != r.maxTime
                        || o.screens != r.maxTotalScreens
                    {
                        report.add(
                            "onboardings: \(id) says \(r.events) events, \(r.minTime)...\(r.maxTime), \(r.maxTotalScreens) screens; events hold \(o.events), \(o.min)...\(o.max), \(o.screens)"
                        )
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
    func fingerprint(session: UInt32, onboarding: UInt32, screen: UInt16, time: Int64) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15
        for v in [UInt64(session), UInt64(onboarding) << 16 | UInt64(screen), UInt64(bitPattern: time)] {
            h = (h ^ v) &* 0xBF58_476D_1CE4_E5B9
            h ^= h >> 31
        }
        return h | 1  // never 0, which marks "no event"
    }

    /// Checks the seal of every value of the sealed databases (SealedValues.swift), reporting each damaged one (up
    /// to 10 per database); `false` when one is.
    private func checkSeals(_ report: inout CheckReport) throws -> Bool {
        var whole = true
        let sealed = [
            dbs.meta, dbs.sessions, dbs.onboardingSessions, dbs.batches, dbs.inferred, dbs.onboardings, dbs.checkpoints,
            dbs.spanningSessions, dbs.sessionLog,
        ]
        for db in sealed where db.sealed {
            var damaged = 0
            try txn.withCursor(Database(dbi: db.dbi, name: db.name)) { c in
                var found = try c.first()
                while found {
                    do {
                        _ = try SealedValue.open(c.value, key: c.key, db)
                    } catch let error as StoreError {
                        damaged += 1
                        if damaged <= 10 { report.add("\(db.name): \(error.message)") }
                    }
                    found = try c.next()
                }
            }
            if damaged > 10 { report.add("\(db.name): \(damaged) damaged entries in all") }
            whole = whole && damaged == 0
        }
        return whole
    }

    private func checkFormat(_ report: inout CheckReport) {
        do {
            let format = try txn.getUInt32(dbs.meta, Layout.metaFormat)
            if format != Layout.formatVersion { report.add("meta: format is \(String(describing: format))") }
        } catch {
            report.add("meta: format: \(error)")
        }
    }
}
