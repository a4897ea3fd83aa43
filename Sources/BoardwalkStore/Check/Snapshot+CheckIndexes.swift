import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

extension Snapshot {
    /// `strings` chunks decode, their ids are dense from 0, and no string repeats (the readers' table relies on
    /// all three).
    func checkStrings(_ report: inout CheckReport) throws {
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
    func checkSessionIndex(
        _ report: inout CheckReport, fingerprints: [UInt64], listed: inout [UInt8],
        mark: UInt8
    ) throws {
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
                        if fingerprints[Int(seq)]
                            != fingerprint(
                                session: session, onboarding: reader.onboarding, screen: reader.screen,
                                time: reader.time)
                        {
                            report.add(
                                "\(place): seq \(seq) is listed under session \(session), onboarding \(reader.onboarding), screen \(reader.screen), time \(reader.time), but the event with that seq in events has another session, onboarding, screen or time"
                            )
                        }
                        if listed[Int(seq)] & mark != 0 { report.add("\(place): seq \(seq) is listed twice") }
                        listed[Int(seq)] |= mark
                    }
                }
                // A segment's base is its first entry (the fold keys new values by it, so a wrong one would collide).
                try? SessionBucketSegment.forEach(in: bytes, keySeq: keySeq, lowLimit: Layout.sessionBucketWidth) {
                    segment in
                    var alone: [UInt8] = []
                    segment.append(keySeq: segment.baseSeq, to: &alone)
                    try alone.withUnsafeBytes { b in
                        var first = try SessionBucketReader(
                            b, keySeq: segment.baseSeq, lowLimit: Layout.sessionBucketWidth)
                        if try first.nextRun(), try first.nextEntry(),
                            first.time != segment.baseTime || first.seq != segment.baseSeq
                        {
                            report.add(
                                "\(place): a segment of bucket \(bucket) (key seq \(keySeq)) has base seq \(segment.baseSeq) and time "
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
                if let nextSeq, seq >= nextSeq {
                    report.add("session_log: the chunk of batch \(seq) is at or past next_seq \(nextSeq)")
                }
                if let (lastSeq, lastBucket) = lastKey, lastSeq == seq, first <= lastBucket {
                    report.add(
                        "session_log: the chunk of batch \(seq) at bucket \(first) starts at or before the bucket "
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
    func checkBatches(_ report: inout CheckReport, listed: inout [UInt8], mark: UInt8) throws {
        var end: UInt64 = 0
        let logBatches = (try? EventLog.batches(txn, dbs)) ?? []
        try txn.withCursor(dbs.batches) { c in
            var found = try c.first()
            var current: (first: UInt64, count: UInt64, chunk: UInt16)? = nil
            while found {
                guard c.key.count == Layout.batchKeySize, c.value.count >= 4 + Layout.eventKeySize,
                    (c.value.count - 4) % Layout.eventKeySize == 0
                else {
                    report.add("batches: an entry has a \(c.key.count)-byte key and a \(c.value.count)-byte value")
                    found = try c.next()
                    continue
                }
                let first = c.key.be64(0)
                let chunk = c.key.be16(8)
                let count = UInt64(c.value.be32(0))
                if let cur = current, cur.first == first {
                    if chunk != cur.chunk &+ 1 || count != cur.count {
                        report.add("batches: batch \(first) chunk \(chunk) disagrees with the one before")
                    }
                } else {
                    if chunk != 0 { report.add("batches: batch \(first) starts at chunk \(chunk)") }
                    if first < end {
                        report.add("batches: batch \(first) overlaps the one before (which ends at \(end))")
                    }
                    end = first &+ count
                }
                current = (first, count, chunk)
                var offset = 4
                while offset < c.value.count {
                    let key = EventKey(
                        UnsafeRawBufferPointer(rebasing: c.value[offset..<offset + Layout.eventKeySize]))!
                    offset += Layout.eventKeySize
                    guard let value = try txn.block(key, ofBatch: first, logBatches: logBatches, dbs) else {
                        report.add(
                            "batches: the block at seq \(key.seq) is not in \(EventLog.database(ofBatch: first, logBatches: logBatches))"
                        )
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
                        if own == 0 {
                            report.add(
                                "batches: batch \(first) lists the block at seq \(key.seq), which holds none of its events"
                            )
                        }
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
    func checkOnboardingSessions(_ report: inout CheckReport, pairs: Set<UInt64>) throws {
        var seen = 0, stray = 0
        try txn.withCursor(dbs.onboardingSessions) { c in
            var found = try c.first()
            var previous: UInt64? = nil
            while found {
                guard c.key.count == Layout.onboardingSessionKeySize else {
                    report.add(
                        "onboarding_sessions: a key is \(c.key.count) bytes, not \(Layout.onboardingSessionKeySize)")
                    found = try c.next()
                    continue
                }
                let onboarding = c.key.be32(0), first = c.key.be32(4)
                do {
                    try OnboardingSessions.forEachEntry(c, key: (onboarding, first)) { session, _ in
                        let pair = UInt64(onboarding) << 32 | UInt64(session)
                        if let previous, pair <= previous {
                            report.add(
                                "onboarding_sessions: onboarding \(onboarding) lists session \(session) out of order "
                                    + "(in the chunk at session \(first))")
                        }
                        previous = pair
                        seen += 1
                        if !pairs.contains(pair) {
                            stray += 1
                            if stray <= 10 {
                                report.add(
                                    "onboarding_sessions: onboarding \(onboarding) lists session \(session), which has no events in it"
                                )
                            }
                        }
                    }
                } catch let error as StoreError {
                    report.add("onboarding_sessions: \(error)")
                }
                found = try c.next()
            }
        }
        if stray > 10 {
            report.add("onboarding_sessions: \(stray) listed sessions in all have no events in their onboarding")
        }
        if seen != pairs.count {
            report.add("onboarding_sessions: \(seen) pairs listed for \(pairs.count) pairs in the events")
        }
    }
}
