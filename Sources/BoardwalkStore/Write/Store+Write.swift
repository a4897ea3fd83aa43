import BoardwalkCodec
import BoardwalkModel

extension Store {
    /// Folds the logs of the batches appended since the last fold into the ordered databases now, in one durable
    /// write transaction (several, each folding the event log's oldest batches, when the process's address-space
    /// limit leaves too little room for one): the event log's blocks into `events` (growing each group's newest block) and the session
    /// log into `sessions` (docs/storage.md, "How an append writes").
    ///
    /// Appends fold the logs by themselves every few batches (``EventLogLimits``, ``SessionLogLimits``); until then
    /// reads merge them in, which costs a seek per logged batch (at most 16) where a read of `events` costs one.
    /// Call it at the end of an import that will be queried a lot; nothing changes in what reads return.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when a log entry does not decode (nothing is
    ///   folded), ``StoreError/Kind/readOnly``, ``StoreError/Kind/closed``, ``StoreError/Kind/system`` (the disk;
    ///   `ENOMEM` when the address-space limit leaves no room to fold even one batch).
    /// - Complexity: O(n) for the n logged events and references, plus O(log N) per group and bucket they touch.
    public func foldLogs() throws {
        // Under an address-space limit (`ulimit -v`) the event log is folded a few batches per transaction: LMDB
        // keeps every page a transaction writes in memory until it commits.
        while try !write({ w in try w.foldLogStep() }) {}
    }

    /// Appends a batch of events in one write transaction and returns after it commits (durably, with
    /// the default ``Durability/full``).
    ///
    /// Each stored event gets the next arrival sequence number (`seq`). An event that is already stored, or came
    /// earlier in the batch, is skipped and counted in ``AppendResult/duplicates``: one with an event id when that
    /// id is stored with the same time, onboarding and screen; one without an id when an event of the same time,
    /// onboarding and screen without an id has the same content (every other field; a session the store inferred
    /// counts as none), so that sending the same data twice stores it once. With `keepIdentical`, events without
    /// an id are all kept, identical or not (`docs/storage.md`, "Duplicates"). An event
    /// without a session gets an inferred one (`docs/storage.md`, "Sessions without ids"). When the map
    /// is full the transaction is aborted, the map grown (every transaction of the process waits) and
    /// the batch redone, so callers never see `MDB_MAP_FULL`.
    ///
    /// Batches of thousands of events amortize the commit's flushes; one event per call is correct but
    /// pays a full commit each time.
    ///
    /// Inside `read { }` or `write { }` of this store on the same thread, `append` throws
    /// ``StoreError/Kind/insideTransaction`` at once (it would wait for that transaction): append with the
    /// ``StoreWriter`` of `write { }`, or after `read { }` returns.
    ///
    /// - Parameters:
    ///   - events: the batch; empty is allowed (useful to store only a checkpoint).
    ///   - checkpoint: stored in the same transaction, so it is durable exactly when the batch is.
    ///   - keepIdentical: store every event without an event id, even one identical to a stored event or to an
    ///     earlier one of the batch (two taps in the same microsecond that no field tells apart). Default `false`.
    /// - Throws: only ``StoreError`` (``StoreError/Kind/system`` for the disk); on a throw nothing of the batch is
    ///   stored.
    ///   ``StoreError/Kind/invalidArgument`` for a bad checkpoint key, or for an event the record format
    ///   cannot hold (a screen index outside `0...Meta.maxScreenIndex`, a record over the format's length
    ///   limit): its message names the event's index in the batch, event id and session, ``StoreError/batchIndex``
    ///   is that index and ``StoreError/underlying`` the codec's `EncodingError`; ``StoreError/Kind/readOnly``,
    ///   ``StoreError/Kind/closed``, ``StoreError/Kind/insideTransaction``.
    /// - Complexity: O(n log n) for n events, plus an append per block (to the event log: about one per group of
    ///   the batch) and per session-log chunk (about 4 KiB of session-index references each); the batch that takes
    ///   the session log past its limits (every 17th with 10 000 events per batch) folds it instead, with O(log N)
    ///   work per bucket of 64 session ids the log touches, and the batch that fills the event log (every 16th)
    ///   folds it into `events`, with a cursor seek to each touched group's newest block and O(log N) work per block
    ///   grown or written. Duplicate detection reads stored blocks only for events not later
    ///   than their group's latest stored event.
    @discardableResult
    public func append(_ events: some Sequence<Event>, checkpoint: Checkpoint? = nil, keepIdentical: Bool = false)
        throws -> AppendResult
    {
        if let checkpoint { try checkpoint.validate() }
        if let result = try events.withContiguousStorageIfAvailable({ batch in
            try write { w in try w.append(buffer: batch, checkpoint: checkpoint, keepIdentical: keepIdentical) }
        }) {
            return result
        }
        return try Array(events).withUnsafeBufferPointer { batch in
            try write { w in try w.append(buffer: batch, checkpoint: checkpoint, keepIdentical: keepIdentical) }
        }
    }

    /// Runs `body` in one write transaction and commits when it returns; aborts and rethrows when it throws.
    ///
    /// Use it to store several batches, or a batch and several checkpoints, atomically:
    ///
    /// ```swift
    /// try store.write { w in
    ///     try w.append(fromFileA)
    ///     try w.append(fromFileB)
    ///     try w.setCheckpoint(Checkpoint(key: "import", value: offsets))
    /// }
    /// ```
    ///
    /// `body` runs on the calling thread and cannot escape or suspend (LMDB ties a write transaction to
    /// its thread). **It may run more than once**: when the map fills up, the transaction is aborted,
    /// the map grown, and `body` called again from the start; keep side effects outside it until it
    /// returns. Appends of the process are serialized (another thread's `write` waits for this one).
    ///
    /// `write` and ``append(_:checkpoint:keepIdentical:)`` of this store inside `body`, or inside a `read { }` of it, on the same
    /// thread throw ``StoreError/Kind/insideTransaction`` at once (they would wait for the transaction they are
    /// called from): use `body`'s ``StoreWriter``. ``read(_:)`` inside `body` is allowed (a snapshot of the last
    /// commit; ``StoreWriter/snapshot`` sees this transaction's writes); ``close()`` inside it takes effect after
    /// the commit.
    /// Wraps `mdb_txn_begin`, `mdb_txn_commit` and `mdb_txn_abort`.
    /// A store marked damaged (``damageFound``: a read or ``check()`` met damage) is refused before anything is
    /// written, and damage that the write itself meets marks it.
    /// - Throws: whatever `body` throws; ``StoreError`` with ``StoreError/Kind/readOnly``,
    ///   ``StoreError/Kind/closed``, ``StoreError/Kind/insideTransaction``, ``StoreError/Kind/system`` (the disk),
    ///   ``StoreError/Kind/corrupt`` for a store marked damaged.
    public func write<R>(_ body: (StoreWriter) throws -> R) throws -> R {
        try checkOpen()
        try checkNotInsideTransaction("store.write or store.append")
        try checkNotMarkedDamaged()
        do {
            return try inFrame(write: true) { try writeInFrame(body) }
        } catch let error as StoreError where error.kind == .corrupt || error.meansDamage {
            let named = namingOnboarding(error)
            markDamaged(named)
            throw named
        }
    }

    private func writeInFrame<R>(_ body: (StoreWriter) throws -> R) throws -> R {
        try withWriter { writer in
            while true {
                do {
                    let result = try env.transaction(write: true) { txn in
                        try checkPagesBeforeFirstWrite(writer, txn)
                        try writer.begin(txn)
                        let result: R
                        do {
                            result = try body(StoreWriter(writer: writer, txn: txn))
                        } catch {
                            // A full map that a call in `body` met, whatever `body` did with the error: abort with it,
                            // so that the map grows and `body` runs again.
                            if let failed = writer.failedPartWay as? StoreError, failed.isMapFull { throw failed }
                            throw error
                        }
                        // A batch that failed part-way, its error caught in `body`: abort with that error (a full
                        // map included, which grows the map and runs `body` again).
                        if let error = writer.failedPartWay { throw error }
                        return result
                    }
                    writer.didCommit()
                    return result
                } catch let error as StoreError where error.isMapFull {
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

extension Store {
    /// The databases the writer reads whole, so the check before its first write walks them whole: the logs (a fold
    /// reads every logged batch) and the string dictionary (loaded whole by the writer's first append).
    static let readWholeByWriter: Set<String> = [Layout.eventLog, Layout.sessionLog, Layout.strings]

    /// The cheap checks before the writer's first write (``Transaction/checkBeforeWrite(whole:limit:)``), in the
    /// write transaction `txn` before it writes anything; once per writer. Damage refuses the write, naming `check`
    /// and the salvage (``write(_:)`` marks the store damaged); a damaged meta page of the commit before the last is
    /// only noted (``olderMetaDamage``).
    func checkPagesBeforeFirstWrite(_ writer: WriterState, _ txn: Transaction) throws {
        guard !writer.pagesChecked else { return }
        let found = try txn.checkBeforeWrite(whole: Store.readWholeByWriter)
        writer.olderMetaDamage = found.olderMeta
        guard found.problems.isEmpty else {
            throw StoreError(
                .corrupt,
                "\(path)/data.mdb is damaged in the pages an append writes into, so nothing was written: "
                    + found.problems.joined(separator: "; ")
                    + ". Run `boardwalk check` on it; `boardwalk export --salvage` saves every event that can be read, "
                    + "for a new store")
        }
        writer.pagesChecked = true
    }

    /// What the checks before this process's first write noted about LMDB's older meta page: that it is damaged
    /// (liblmdb reads the newer one, and the next commit writes over the damaged one); `nil` when it is sound or no
    /// write has run yet.
    package var olderMetaDamage: String? {
        (try? withWriter { $0.olderMetaDamage }) ?? nil
    }

    /// The error for an event of a batch that the record format cannot hold: which one, and why.
    static func refusal(of event: Event, at index: Int, _ error: EncodingError) -> StoreError {
        func quoted(_ s: String?) -> String {
            guard let s else { return "none" }
            return "\"" + (s.count > 80 ? s.prefix(80) + "…" : s) + "\""
        }
        return StoreError(
            .invalidArgument,
            "event \(index) of the batch (event id \(quoted(event.eventID)), session "
                + "\(quoted(event.session))) cannot be stored, so nothing of the batch was",
            underlying: error, batchIndex: index)
    }
}
