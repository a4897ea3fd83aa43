import BoardwalkCodec
import BoardwalkModel

/// The write side of a ``Store/write(_:)`` transaction, valid only inside that closure.
public struct StoreWriter {
    let writer: WriterState
    let txn: Transaction

    /// Appends a batch in this transaction: seqs, duplicates and inferred sessions exactly as
    /// ``Store/append(_:checkpoint:keepIdentical:)`` (`keepIdentical` as there), durable when the transaction
    /// commits.
    ///
    /// An event the record format cannot hold refuses the batch with ``StoreError`` (kind
    /// ``StoreError/Kind/invalidArgument``, ``StoreError/batchIndex`` its index, `underlying` the codec's
    /// `EncodingError`); nothing of the batch is stored and the transaction stays usable. Any other error (a
    /// damaged value the batch must grow, an LMDB error) may come after the batch began writing: the transaction
    /// is then unusable, later calls in it throw, and ``Store/write(_:)`` aborts it with that error even when
    /// the closure catches it.
    /// - Complexity: O(n log n) for n events, plus an append per block (to the event log: about one per group of
    ///   the batch) and per session-log chunk (about 4 KiB of session-index references each); the batch that takes
    ///   the session log past its limits (every 17th with 10 000 events per batch) folds it instead, with O(log N)
    ///   work per bucket of 64 session ids the log touches, and the batch that fills the event log (every 16th)
    ///   folds it into `events`, with a cursor seek to each touched group's newest block and O(log N) work per block
    ///   grown or written. Duplicate detection reads stored blocks only for events not later
    ///   than their group's latest stored event.
    /// - Throws: ``StoreError`` (the refusal above, or what ``Store/append(_:checkpoint:keepIdentical:)`` throws).
    @discardableResult
    public func append(_ events: some Sequence<Event>, keepIdentical: Bool = false) throws -> AppendResult {
        if let result = try events.withContiguousStorageIfAvailable({
            try append(buffer: $0, checkpoint: nil, keepIdentical: keepIdentical)
        }) {
            return result
        }
        return try Array(events).withUnsafeBufferPointer {
            try append(buffer: $0, checkpoint: nil, keepIdentical: keepIdentical)
        }
    }

    /// Stores `checkpoint` in this transaction, replacing the value under its key.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/invalidArgument`` for a key that is empty or longer
    ///   than 400 UTF-8 bytes.
    public func setCheckpoint(_ checkpoint: Checkpoint) throws {
        try checkpoint.validate()
        try writer.putCheckpoint(checkpoint, txn: txn)
    }

    /// Folds the event log and the session log into `events` and `sessions` in this transaction, as
    /// ``Store/foldLogs()`` does.
    /// - Throws: as ``Store/foldLogs()``.
    public func foldLogs() throws {
        try writer.foldLogs(txn)
    }

    /// Folds the session log and as many of the event log's oldest batches as the process's address-space limit
    /// leaves room for (all of them without a limit); ``Store/foldLogs()`` commits one such step at a time.
    /// - Returns: whether the event log is empty now.
    package func foldLogStep() throws -> Bool {
        try writer.foldLogs(txn, stepped: true)
    }

    /// A snapshot that sees this transaction's own writes, for reads in the middle of a write.
    public var snapshot: Snapshot {
        get throws { try Snapshot(txn: txn, dbs: writer.dbs, cache: writer.cache) }
    }

    func append(buffer: UnsafeBufferPointer<Event>, checkpoint: Checkpoint?, keepIdentical: Bool = false) throws
        -> AppendResult
    {
        let result = try writer.append(buffer, txn: txn, keepIdentical: keepIdentical)
        if let checkpoint { try writer.putCheckpoint(checkpoint, txn: txn) }
        return result
    }
}
