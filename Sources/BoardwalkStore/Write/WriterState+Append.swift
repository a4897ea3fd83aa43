import BoardwalkCodec
import BoardwalkModel

extension WriterState {
    /// Appends one batch inside the running transaction (after ``begin(_:)``). With `keepIdentical`, an event
    /// without an event id is never a duplicate; otherwise one with the same group, time and content as a stored
    /// event or an earlier one of the batch is (docs/storage.md, "Duplicates").
    func append(_ events: UnsafeBufferPointer<Event>, txn: Transaction, keepIdentical: Bool = false) throws
        -> AppendResult
    {
        try checkUsable()
        // The table moves into the interner for the batch (leaving an empty one here, so that it stays
        // uniquely referenced and grows in place) and comes back however the batch ends.
        batchStartStrings = table.count
        batchLog = nil
        logBatches = try EventLog.batches(txn, dbs)
        var interner = Interner(table: table, txn: txn, dbs: dbs, stored: table.count)
        table = StringTable()
        defer { table = interner.table }
        let firstSeq = nextSeq
        // The hot loop works on locals: class properties would pay a dynamic exclusivity check per access.
        var encoder = RecordEncoder(capacity: 0)
        var entries: [Entry] = []
        var newPairs: [(pair: UInt64, timeBits: UInt64)] = []
        var pendingPairs: [UInt64] = []
        var batchIDs = BatchKeySet(seed: (0, 0))
        var groupTimes = GroupTimeMemo(seed: 0)
        var pairFilter = SessionPairFilter()
        var profileFilter = SessionPairFilter()
        var pendingProfiles: [UInt64] = []
        var nameRequests: [(role: UInt8, name: UInt32, session: UInt32)] = []
        swap(&encoder, &self.encoder)
        swap(&entries, &self.entries)
        swap(&newPairs, &self.newPairs)
        swap(&pendingPairs, &self.pendingPairs)
        swap(&batchIDs, &self.batchIDs)
        swap(&groupTimes, &self.groupTimes)
        swap(&pairFilter, &self.pairFilter)
        swap(&profileFilter, &self.profileFilter)
        swap(&pendingProfiles, &self.pendingProfiles)
        var next = nextSeq
        let pendingAtStart = pendingPairs.count
        let pendingProfilesAtStart = pendingProfiles.count
        // Inference state as it was before the batch (copy-on-write: copied only if an event of the batch
        // changes it), put back if the batch is refused part-way.
        let inferAtStart = pendingInfer
        var loopFinished = false
        defer {
            if !loopFinished {
                // The refused batch's strings were flushed where its error was caught (a failed flush cuts the
                // table back, so the table matches `strings` either way).
                pendingInfer = inferAtStart
                // An event the encoder refused (the caller may catch that and go on in the same
                // transaction): the pairs of this batch were not written, so they are not known.
                for pair in pendingPairs[pendingAtStart...] { pairFilter.forget(pair) }
                pendingPairs.removeSubrange(pendingAtStart...)
                for pair in pendingProfiles[pendingProfilesAtStart...] { profileFilter.forget(pair) }
                pendingProfiles.removeSubrange(pendingProfilesAtStart...)
            }
            swap(&encoder, &self.encoder)
            swap(&entries, &self.entries)
            swap(&newPairs, &self.newPairs)
            swap(&pendingPairs, &self.pendingPairs)
            swap(&batchIDs, &self.batchIDs)
            swap(&groupTimes, &self.groupTimes)
            swap(&pairFilter, &self.pairFilter)
            swap(&profileFilter, &self.profileFilter)
            swap(&pendingProfiles, &self.pendingProfiles)
        }
        entries.removeAll(keepingCapacity: true)
        encoder.removeAll()
        newPairs.removeAll(keepingCapacity: true)
        batchIDs.removeAll()
        groupTimes.removeAll()
        storedIDs.removeAll(keepingCapacity: true)
        loadedRanges.removeAll(keepingCapacity: true)
        var kindCounts = [UInt64](repeating: 0, count: EventKind.allCases.count)
        var duplicates = 0
        var inferredSessions: UInt64 = 0
        var minTime = Int64.max
        var maxTime = Int64.min
        let base = events.baseAddress
        var ahead = IDPrefetcher()
        // Whether `key` was seen earlier in the batch, or is stored (looked for only when the event is not later
        // than its group's latest stored event: live ingestion never reads a block to look).
        func isDuplicate(_ key: DuplicateKey, group: UInt64) throws -> Bool {
            if !batchIDs.insert(key) { return true }
            let latest: UInt64
            if let known = groupTimes.time(of: group) {
                latest = known
            } else {
                latest = try latestTime(of: group, txn: txn)
                groupTimes.note(group, time: latest)
            }
            guard key.timeBits <= latest else { return false }
            return try isStoredDuplicate(
                key, group: group, txn: txn, contents: !keepIdentical,
                isInferred: { interner.table.string(for: $0).map(Store.isInferredName) ?? false })
        }
        // ``isDuplicate(_:group:)`` for an event without an id, by its encoded body.
        func isContentDuplicate(_ record: EncodedRecord, timeBits: UInt64) throws -> Bool {
            let group = UInt64(record.header.keyOnboarding) << 16 | UInt64(record.header.keyScreenIndex)
            let key = encoder.withUnsafeBytes {
                DuplicateKey(
                    group: group, timeBits: timeBits, content: UnsafeRawBufferPointer(rebasing: $0[record.range]),
                    seed: contentSeed)
            }
            return try isDuplicate(key, group: group)
        }
        do {
            for index in 0..<events.count {
                ahead.advance(events, at: index, interner.table)
                // Fields are read through the pointer so that the event is not copied (a copy retains every string).
                let original = base! + index
                let time = original.pointee.time.microseconds
                let timeBits = Layout.timeBits(time)
                // Semantics rule 11: empty ids and replies are absent (`Store.normalized`). The encoder writes them
                // as absent (`emptyIsAbsent`), and an empty event id is simply not looked up; only an event without a
                // session (absent or empty) is copied, normalized and given an inferred one. Checking every event
                // for empty strings first and copying the few that had some cost ~90 instructions per event, most of
                // it a copy of each `screen_completed` payload to look at its strings.
                // A session named as another store's inferred session is inferred again here (`isInferredName`).
                let reinfer = Store.isInferredName(at: original.pointer(to: \.session)!)
                let noSession = reinfer || Store.isMissing(at: original.pointer(to: \.session)!)
                // Made once, for the duplicate check and the encoder (which would otherwise parse it again).
                var idRef: EventIDRef? = nil
                let hasID = !Store.isMissing(at: original.pointer(to: \.eventID)!)
                if hasID {
                    // A duplicate has the same group, time and event id as a stored event or an earlier one
                    // of this batch (docs/storage.md, "Duplicates"). Id and meta are read in place: loading them
                    // (`if let id = …eventID`, `…meta?.screenIndex`) retained and released their strings.
                    var group = UInt64(RecordFormat.noOnboarding) << 16 | UInt64(RecordFormat.noScreen)
                    if let screen = Store.keyScreenIndex(at: original) {
                        let onboarding = try original.pointer(to: \.meta)!.withMemoryRebound(to: Meta.self, capacity: 1)
                        {
                            try interner.intern(at: $0.pointer(to: \.onboardingID)!)
                        }
                        group = UInt64(onboarding) << 16 | UInt64(screen)
                    }
                    let ref = try original.pointer(to: \.eventID)!.withMemoryRebound(to: String.self, capacity: 1) {
                        try EventIDRef(interningAt: $0, strings: &interner)
                    }
                    idRef = ref
                    let key = DuplicateKey(group: group, timeBits: timeBits, id: ref)
                    if try isDuplicate(key, group: group) {
                        duplicates += 1
                        continue
                    }
                }
                // Without an id, the event's content is its identity: its record body as stored (a session the
                // store infers left out), so that the same data sent again is skipped (docs/storage.md,
                // "Duplicates"). The body is encoded first and compared; a duplicate's bytes are taken back.
                let byContent = !hasID && !keepIdentical
                let seq = next
                let record: EncodedRecord
                if noSession {
                    var event = original.pointee
                    Store.normalize(&event)
                    if reinfer { event.session = nil }
                    if byContent {
                        // Before inference, which a duplicate must not touch: the body without a session.
                        let mark = encoder.count
                        let probe = try withUnsafePointer(to: &event) {
                            try encoder.appendBody(at: $0, strings: &interner, eventID: nil, emptyIsAbsent: true)
                        }
                        let duplicate = try isContentDuplicate(probe, timeBits: timeBits)
                        encoder.removeLast(from: mark)
                        if duplicate {
                            duplicates += 1
                            continue
                        }
                    }
                    let (name, isNew) = try inferSession(for: event, seq: seq, interner: &interner)
                    event.session = name
                    if isNew { inferredSessions += 1 }
                    record = try withUnsafePointer(to: &event) {
                        try encoder.appendBody(at: $0, strings: &interner, eventID: idRef, emptyIsAbsent: true)
                    }
                } else {
                    record = try encoder.appendBody(
                        at: original, strings: &interner, eventID: idRef, emptyIsAbsent: true)
                    if byContent, try isContentDuplicate(record, timeBits: timeBits) {
                        encoder.removeLast(from: record.range.lowerBound)
                        duplicates += 1
                        continue
                    }
                }
                // What NDJSON cannot carry back in (an export must read back): times outside `Timestamp.range`, total
                // screens outside the model's range, strings, multi-selects or a whole line past the reader's limits.
                // Those are looked for only when an interned string was over 4 KiB or the record is over 1 000 bytes
                // (a text is written in it; a multi-select takes at least a byte per choice), a few events in a
                // million: a line over 1 MiB needs one or the other.
                if time < Timestamp.range.lowerBound.microseconds || time > Timestamp.range.upperBound.microseconds {
                    throw EncodingError(.timeOutOfRange(time))
                }
                let total = original.pointee.meta?.totalScreens ?? 0
                if total < 0 || total > Meta.maxScreenIndex + 1 { throw EncodingError(.totalScreensOutOfRange(total)) }
                if interner.sawLongString || record.range.count > RecordFormat.maxChoices {
                    if let error = Store.interchangeLimitError(original.pointee) { throw error }
                    interner.sawLongString = false
                }
                let onboarding = record.header.keyOnboarding
                let screen = record.header.keyScreenIndex
                let session = record.session!
                let totalScreens = UInt32(clamping: total)
                entries.append(
                    Entry(
                        onboarding: onboarding, screen: screen, session: session, totalScreens: totalScreens,
                        timeBits: timeBits, seq: seq, body: record.range))
                next += 1

                let pair = UInt64(onboarding) << 32 | UInt64(session)
                // Most events belong to a pair an earlier event made known: the filter answers those.
                if !pairFilter.contains(pair) {
                    // New to the store, or only forgotten (a session in two onboardings, or one whose slot a later
                    // session took); writeOnboardingSessions drops repeats and pairs already stored.
                    newPairs.append((pair, timeBits))
                    pendingPairs.append(pair)
                    pairFilter.note(pair)
                    nameRequests.append((SessionNames.Role.session.rawValue, session, session))
                }
                // The same for the (profile, session) pairs of `session_names`.
                if let profile = record.profile {
                    let profilePair = UInt64(profile) << 32 | UInt64(session)
                    if !profileFilter.contains(profilePair) {
                        nameRequests.append((SessionNames.Role.profile.rawValue, profile, session))
                        pendingProfiles.append(profilePair)
                        profileFilter.note(profilePair)
                    }
                }
                kindCounts[Int(original.pointee.payload.kind.code)] += 1  // codes are in `allCases` order
                minTime = min(minTime, time)
                maxTime = max(maxTime, time)
            }
        } catch {
            // Refused part-way (the caller may catch an encoder's error and go on in this transaction): the
            // strings the batch interned are stored all the same, so that the table matches `strings`. A failure
            // to store them (the map full) is the error to report: `Store.write` grows the map on it and runs
            // the body again, while the transaction it leaves behind would refuse every later call.
            do {
                try interner.flush()
            } catch let flushError {
                // The transaction cannot commit now, even if the caller catches the error (``failedPartWay``).
                failedPartWay = flushError
                // A store error in the loop has poisoned the transaction for the flush too: report the first.
                throw error is StoreError ? error : flushError
            }
            if let encoding = error as? EncodingError {
                // Every event before the refused one was either given a seq or counted as a duplicate.
                let index = Int(next - firstSeq) + duplicates
                throw Store.refusal(of: events[index], at: index, encoding)
            }
            throw error
        }
        do {
            try interner.flush()
        } catch {
            failedPartWay = error
            throw error
        }
        let nameEntries: [SessionNames.Entry]
        do {
            nameEntries = try WriterState.sessionNameEntries(nameRequests, table: interner.table)
        } catch {
            failedPartWay = error
            throw error
        }
        loopFinished = true
        nextSeq = next
        // Hand the buffers back for the writers below (the deferred swap then restores them unchanged).
        swap(&encoder, &self.encoder)
        swap(&entries, &self.entries)
        defer {
            swap(&encoder, &self.encoder)
            swap(&entries, &self.entries)
        }
        // From here on the batch is half written if a step throws: the transaction must not commit.
        do {
            return try writeBatch(
                txn, newPairs: newPairs, names: nameEntries, firstSeq: firstSeq, kindCounts: kindCounts,
                duplicates: duplicates, inferred: inferredSessions, minTime: minTime, maxTime: maxTime)
        } catch {
            failedPartWay = error
            throw error
        }
    }

    /// The databases' part of ``append(_:txn:)`` once every event is encoded: all or nothing only with the
    /// transaction, so an error here marks it failed (``failedPartWay``).
    private func writeBatch(
        _ txn: Transaction, newPairs: [(pair: UInt64, timeBits: UInt64)], names: [SessionNames.Entry],
        firstSeq: UInt64, kindCounts: [UInt64], duplicates: Int, inferred inferredSessions: UInt64, minTime: Int64,
        maxTime: Int64
    ) throws -> AppendResult {
        let newSessions = try writeOnboardingSessions(txn, newPairs)
        try writeSessionNames(txn, names)
        try writeEvents(txn, firstSeq: firstSeq)
        try writeSessionIndex(txn, firstSeq: firstSeq)
        try writeBatches(txn, firstSeq: firstSeq)
        try writeInference(txn)
        try writeOnboardingStats(txn)
        try writeCounters(
            txn, kindCounts: kindCounts, duplicates: UInt64(duplicates), sessions: UInt64(newSessions),
            inferred: inferredSessions,
            minTime: minTime, maxTime: maxTime)
        let result = AppendResult(appended: self.entries.count, duplicates: duplicates, seqs: firstSeq..<nextSeq)
        if !self.entries.isEmpty {
            logBatches.append(firstSeq)
            if try eventLogIsFull(txn, batches: logBatches.count) {
                let step = try foldStep(txn, batches: logBatches)
                try foldEventLog(txn, batches: Array(logBatches.prefix(step)))
                logBatches.removeFirst(step)
            }
        }
        return result
    }

    /// ``StoreWriter/foldLogs()``: both logs folded, whatever their size; with `stepped`, only as many of the event
    /// log's oldest batches as the address-space limit leaves room for (``foldStep(_:batches:)``).
    /// - Returns: whether the event log is empty now.
    @discardableResult
    func foldLogs(_ txn: Transaction, stepped: Bool = false) throws -> Bool {
        try checkUsable()
        do {
            if try !sessionLog(txn).isEmpty {
                try foldSessionLog(txn, batch: LogChunks(), firstSeq: nextSeq)
                batchLog = nil
            }
            let batches = try EventLog.batches(txn, dbs)
            let step = stepped ? try foldStep(txn, batches: batches) : batches.count
            try foldEventLog(txn, batches: Array(batches.prefix(step)))
            return step == batches.count
        } catch {
            failedPartWay = error
            throw error
        }
    }
}
