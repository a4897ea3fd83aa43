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
        var lines = ["\(problemCount) problem(s) in \(eventsChecked) events:"]
        lines += problems.map { "  " + $0 }
        if problemCount > problems.count { lines.append("  … and \(problemCount - problems.count) more") }
        return lines.joined(separator: "\n")
    }
}

extension Store {
    /// Verifies the store: every record decodes; every index entry (`sessions`, `batches`, `event_ids`,
    /// `onboarding_sessions`, `string_ids`) points to an existing event or string and back; the counters
    /// in `meta` and `onboardings` match what is stored. Runs in one read transaction, concurrently with
    /// writers.
    ///
    /// - Returns: a report listing what is wrong; damage never traps.
    /// - Throws: ``LMDBError`` only when LMDB itself cannot be read.
    /// - Complexity: O(N log N) for N events; memory O(sessions + onboardings).
    public func check() throws -> CheckReport {
        try read { snapshot in try snapshot.check() }
    }
}

extension Snapshot {
    func check() throws -> CheckReport {
        var report = CheckReport()
        checkFormat(&report)
        try checkStrings(&report)

        // events → sessions, event_ids, onboarding_sessions; and the counters.
        var kinds = [EventKind: UInt64]()
        var perOnboarding: [UInt32: (events: UInt64, min: Int64, max: Int64, screens: UInt32)] = [:]
        var pairs = Set<UInt64>()
        var maxSeq: UInt64? = nil
        var minTime = Int64.max
        var maxTime = Int64.min
        try txn.withCursor(dbs.events) { c in
            var found = try c.first()
            while found {
                report.eventsChecked += 1
                guard let key = EventKey(c.key) else {
                    report.add("events: a key of \(c.key.count) bytes (expected \(Layout.eventKeySize))")
                    found = try c.next()
                    continue
                }
                maxSeq = max(maxSeq ?? 0, key.seq)
                let record: RecordView
                do {
                    record = try RecordView(body: c.value, header: key.header, stringLimit: stringCount)
                } catch {
                    report.add("events: seq \(key.seq) (onboarding \(key.onboarding), screen \(key.screen)) does not decode: \(error)")
                    found = try c.next()
                    continue
                }
                kinds[record.kind, default: 0] += 1
                let time = Layout.time(fromBits: key.timeBits)
                minTime = min(minTime, time)
                maxTime = max(maxTime, time)
                var o = perOnboarding[key.onboarding] ?? (0, .max, .min, 0)
                o.events += 1
                o.min = min(o.min, time)
                o.max = max(o.max, time)
                if let total = record.totalScreens { o.screens = max(o.screens, UInt32(clamping: total)) }
                perOnboarding[key.onboarding] = o

                if let session = record.session {
                    pairs.insert(UInt64(key.onboarding) << 32 | UInt64(session))
                    try checkSessionEntry(key, session: session, &report)
                } else {
                    report.add("events: seq \(key.seq) has no session")
                }
                if let eventID = record.eventID { try checkEventIDEntry(key, eventID, &report) }
                found = try c.next()
            }
        }

        let events = UInt64(report.eventsChecked)
        try checkSessionIndex(&report, events: events)
        try checkBatches(&report, events: events)
        try checkEventIDIndex(&report)
        try checkOnboardingSessions(&report, pairs: pairs)

        // Counters.
        func expect(_ name: String, _ stored: UInt64?, _ actual: UInt64) {
            if (stored ?? 0) != actual { report.add("meta: \(name) is \(stored ?? 0), but \(actual) are stored") }
        }
        expect(Layout.metaEvents, try txn.getUInt64(dbs.meta, Layout.metaEvents), events)
        for kind in EventKind.allCases {
            expect(Layout.metaKind(kind), try txn.getUInt64(dbs.meta, Layout.metaKind(kind)), kinds[kind] ?? 0)
        }
        let nextSeq = try txn.getUInt64(dbs.meta, Layout.metaNextSeq) ?? 0
        if let maxSeq, maxSeq >= nextSeq { report.add("meta: next_seq \(nextSeq) is not above the largest seq \(maxSeq)") }
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

    private func checkFormat(_ report: inout CheckReport) {
        do {
            let format = try txn.getUInt32(dbs.meta, Layout.metaFormat)
            if format != Layout.formatVersion { report.add("meta: format is \(String(describing: format))") }
        } catch {
            report.add("meta: format: \(error)")
        }
    }

    /// `strings` ids are dense from 0, and each string's `string_ids` entry names its id.
    private func checkStrings(_ report: inout CheckReport) throws {
        var expected: UInt32 = 0
        try withUnsafeTemporaryAllocation(byteCount: 512, alignment: 8) { buf in
            try txn.withCursor(dbs.strings) { c in
                var found = try c.first()
                while found {
                    guard c.key.count == 4, c.key.be32(0) == expected else {
                        report.add("strings: id \(expected) is missing (found a \(c.key.count)-byte key)")
                        return
                    }
                    let n = Layout.stringKey(c.value, into: buf.baseAddress!)
                    let id = try txn.get(dbs.stringIDs, UnsafeRawBufferPointer(start: buf.baseAddress!, count: n))
                    if id?.count != 4 || id!.be32(0) != expected {
                        // A long string whose prefix-and-hash key another long string took first is legal.
                        if !(c.value.count > Layout.maxInlineKeyString && id?.count == 4) {
                            report.add("strings: id \(expected) has no string_ids entry naming it")
                        }
                    }
                    expected += 1
                    found = try c.next()
                }
            }
        }
        let ids = try txn.entries(dbs.stringIDs)
        if ids > Int(expected) { report.add("string_ids: \(ids) entries for \(expected) strings") }
    }

    private func checkSessionEntry(_ key: EventKey, session: UInt32, _ report: inout CheckReport) throws {
        try withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { buf in
            let k = buf.baseAddress!
            k.storeBE(session, at: 0)
            k.storeBE(key.timeBits, at: 4)
            k.storeBE(key.seq, at: 12)
            guard let v = try txn.get(dbs.sessions, UnsafeRawBufferPointer(start: k, count: Layout.sessionKeySize)) else {
                report.add("sessions: no entry for seq \(key.seq) (session \(session))")
                return
            }
            if v.count != Layout.sessionValueSize || v.be32(0) != key.onboarding || v.be16(4) != key.screen {
                report.add("sessions: the entry for seq \(key.seq) does not name its onboarding and screen")
            }
        }
    }

    private func eventIDString(_ ref: EventIDRef) -> String? {
        switch ref {
        case .string(let id): string(for: id)
        case .uuid: ref.uuidString
        }
    }

    private func checkEventIDEntry(_ key: EventKey, _ ref: EventIDRef, _ report: inout CheckReport) throws {
        guard let id = eventIDString(ref) else {
            report.add("events: seq \(key.seq) has an event id that does not resolve")
            return
        }
        try withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 8) { buf in
            let n = id.withUTF8Bytes { Layout.eventIDKey(timeBits: key.timeBits, id: $0, into: buf.baseAddress!) }
            guard let v = try txn.get(dbs.eventIDs, UnsafeRawBufferPointer(start: buf.baseAddress!, count: n)) else {
                report.add("event_ids: no entry for seq \(key.seq)")
                return
            }
            if EventKey(v) != key { report.add("event_ids: the entry for seq \(key.seq) points elsewhere") }
        }
    }

    /// Every `sessions` entry points to an event of that session.
    private func checkSessionIndex(_ report: inout CheckReport, events: UInt64) throws {
        var count: UInt64 = 0
        try txn.withCursor(dbs.sessions) { c in
            var found = try c.first()
            while found {
                count += 1
                guard c.key.count == Layout.sessionKeySize, c.value.count == Layout.sessionValueSize else {
                    report.add("sessions: an entry has a \(c.key.count)-byte key and a \(c.value.count)-byte value")
                    found = try c.next()
                    continue
                }
                let key = EventKey(onboarding: c.value.be32(0), screen: c.value.be16(4), timeBits: c.key.be64(4), seq: c.key.be64(12))
                let session = c.key.be32(0)
                if let body = try key.withBytes({ try txn.get(dbs.events, $0) }) {
                    if let record = try? RecordView(body: body, header: key.header, stringLimit: stringCount),
                       record.session != session {
                        report.add("sessions: seq \(key.seq) is listed under session \(session) but has session \(String(describing: record.session))")
                    }
                } else {
                    report.add("sessions: seq \(key.seq) (session \(session)) is not in events")
                }
                found = try c.next()
            }
        }
        if count != events { report.add("sessions: \(count) entries for \(events) events") }
    }

    /// `batches` lists every event once, in increasing seq order.
    private func checkBatches(_ report: inout CheckReport, events: UInt64) throws {
        var count: UInt64 = 0
        var last: UInt64? = nil
        try txn.withCursor(dbs.batches) { c in
            var found = try c.first()
            while found {
                guard c.key.count == 8, c.value.count > 0, c.value.count % Layout.eventKeySize == 0 else {
                    report.add("batches: an entry has a \(c.key.count)-byte key and a \(c.value.count)-byte value")
                    found = try c.next()
                    continue
                }
                let first = c.key.be64(0)
                var offset = 0
                while offset < c.value.count {
                    let key = EventKey(UnsafeRawBufferPointer(rebasing: c.value[offset..<offset + Layout.eventKeySize]))!
                    if offset == 0 && key.seq != first { report.add("batches: entry \(first) starts with seq \(key.seq)") }
                    offset += Layout.eventKeySize
                    count += 1
                    if let last, key.seq <= last { report.add("batches: seq \(key.seq) follows \(last)") }
                    last = key.seq
                    if try key.withBytes({ try txn.get(dbs.events, $0) }) == nil {
                        report.add("batches: seq \(key.seq) is not in events")
                    }
                }
                found = try c.next()
            }
        }
        if count != events { report.add("batches: \(count) entries for \(events) events") }
    }

    /// Every `event_ids` entry points to an event with that id and time.
    private func checkEventIDIndex(_ report: inout CheckReport) throws {
        try withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 8) { buf in
            try txn.withCursor(dbs.eventIDs) { c in
                var found = try c.first()
                while found {
                    guard let key = EventKey(c.value) else {
                        report.add("event_ids: a value of \(c.value.count) bytes")
                        found = try c.next()
                        continue
                    }
                    if let body = try key.withBytes({ try txn.get(dbs.events, $0) }) {
                        if let record = try? RecordView(body: body, header: key.header, stringLimit: stringCount) {
                            let expected = record.eventID.flatMap(eventIDString).map { id in
                                id.withUTF8Bytes { Layout.eventIDKey(timeBits: key.timeBits, id: $0, into: buf.baseAddress!) }
                            }
                            if expected.map({ UnsafeRawBufferPointer(start: buf.baseAddress!, count: $0) })
                                .map({ $0.elementsEqual(c.key) }) != true {
                                report.add("event_ids: an entry points to seq \(key.seq), whose event id or time differs")
                            }
                        }
                    } else {
                        report.add("event_ids: an entry points to seq \(key.seq), which is not in events")
                    }
                    found = try c.next()
                }
            }
        }
    }

    private func checkOnboardingSessions(_ report: inout CheckReport, pairs: Set<UInt64>) throws {
        var seen = 0
        try txn.withCursor(dbs.onboardingSessions) { c in
            var found = try c.first()
            while found {
                seen += 1
                if c.key.count != 8 || !pairs.contains(c.key.be64(0)) {
                    report.add("onboarding_sessions: an entry names a session with no events in that onboarding")
                }
                found = try c.next()
            }
        }
        if seen != pairs.count { report.add("onboarding_sessions: \(seen) entries for \(pairs.count) sessions") }
    }
}
