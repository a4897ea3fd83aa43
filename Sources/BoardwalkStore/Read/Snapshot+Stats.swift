import BoardwalkCodec
import BoardwalkModel

extension Snapshot {
    /// Counts and ranges of the whole store.
    /// - Complexity: O(1): counters kept by every append, and `mdb_stat`.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when a counter in `meta` is damaged.
    public func stats() throws -> StoreStats {
        var kinds: [EventKind: Int] = [:]
        for kind in EventKind.allCases { kinds[kind] = Int(try txn.getUInt64(dbs.meta, Layout.metaKind(kind)) ?? 0) }
        let minTime = try txn.getUInt64(dbs.meta, Layout.metaMinTime)
        let maxTime = try txn.getUInt64(dbs.meta, Layout.metaMaxTime)
        var range: ClosedRange<Timestamp>? = nil
        if let minTime, let maxTime {
            guard minTime <= maxTime else {
                throw StoreError(
                    .corrupt, "meta: min_time is after max_time (the store's counters are damaged; check() says more)")
            }
            range =
                Timestamp(
                    microseconds: Layout.time(fromBits: minTime))...Timestamp(
                    microseconds: Layout.time(fromBits: maxTime))
        }
        var pages = 0
        for db in [
            dbs.meta, dbs.events, dbs.sessions, dbs.onboardingSessions, dbs.batches, dbs.strings,
            dbs.inferred, dbs.onboardings, dbs.checkpoints, dbs.spanningSessions, dbs.sessionLog, dbs.eventLog,
            dbs.sessionNames, dbs.blockHeads,
        ] {
            pages += try txn.pages(db)
        }
        // Events without a position are summed under the no-onboarding key: not an onboarding.
        var noOnboarding = RecordFormat.noOnboarding.bigEndian
        let unpositioned = try withUnsafeBytes(of: &noOnboarding) { try txn.get(dbs.onboardings, $0) != nil }
        return StoreStats(
            events: Int(try txn.getUInt64(dbs.meta, Layout.metaEvents) ?? 0),
            duplicatesSkipped: Int(try txn.getUInt64(dbs.meta, Layout.metaDuplicates) ?? 0),
            sessions: Int(try txn.getUInt64(dbs.meta, Layout.metaSessions) ?? 0),
            inferredSessions: Int(try txn.getUInt64(dbs.meta, Layout.metaInferredSessions) ?? 0),
            onboardings: try txn.entries(dbs.onboardings) - (unpositioned ? 1 : 0),
            strings: Int(stringCount),
            eventsByKind: kinds,
            timeRange: range,
            nextSeq: try txn.getUInt64(dbs.meta, Layout.metaNextSeq) ?? 0,
            bytes: pages * txn.pageSize)
    }

    /// The batches not yet folded from each log: those whose blocks are still in the event log (reads merge them
    /// in; ``Store/foldLogs()`` folds them) and those whose session references are still in the session log.
    ///
    /// Apart from ``stats()``, which reads no page of a database: a damaged page met here fails the rest of this
    /// snapshot's reads (LMDB marks the transaction failed), so call it last, or in a snapshot of its own.
    /// - Throws: ``StoreError/Kind/corrupt`` for a log key of the wrong size; ``StoreError/Kind/lmdb``
    ///   (``StoreError/meansDamage``) for a damaged page.
    /// - Complexity: O(batches × log N) for the event log (a seek per batch); O(chunks) for the session log's keys.
    public func unfoldedBatches() throws -> (eventLog: Int, sessionLog: Int) {
        (try eventLogBatches().count, try sessionLog().batches.count)
    }

    /// Every onboarding with its counters, in id order.
    /// - Complexity: O(onboardings).
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a damaged `onboardings` entry.
    public func onboardings() throws -> [OnboardingSummary] {
        var out: [OnboardingSummary] = []
        try txn.withCursor(dbs.onboardings) { c in
            var found = try c.first()
            while found {
                guard c.key.count == 4 else {
                    throw StoreError(.corrupt, "an onboardings key is \(c.key.count) bytes, not 4")
                }
                let id = c.key.be32(0)
                let r = try OnboardingSummaryRecord(c.value)
                guard r.minTime <= r.maxTime else {
                    throw StoreError(
                        .corrupt,
                        "onboardings: the entry of onboarding id \(id) has its min time after its max time "
                            + "(damaged; check() says more)")
                }
                out.append(
                    OnboardingSummary(
                        id: id == RecordFormat.noOnboarding ? nil : id,
                        onboardingID: id == RecordFormat.noOnboarding ? nil : string(for: id),
                        events: Int(r.events),
                        timeRange: Timestamp(microseconds: r.minTime)...Timestamp(microseconds: r.maxTime),
                        maxTotalScreens: Int(r.maxTotalScreens)))
                found = try c.next()
            }
        }
        return out
    }

    /// The value stored with ``Checkpoint/key`` `key` by the last append that carried one, or `nil`.
    /// - Throws: ``StoreError`` only for a page LMDB cannot read (``StoreError/Kind/lmdb``).
    public func checkpoint(_ key: String) throws -> [UInt8]? {
        guard !key.isEmpty, key.utf8.count <= Layout.maxInlineKeyString else { return nil }
        return try key.withUTF8Bytes { k in try txn.get(dbs.checkpoints, k).map { Array($0) } }
    }
}
