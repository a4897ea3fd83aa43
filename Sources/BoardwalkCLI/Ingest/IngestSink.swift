import Boardwalk

/// Where ingested events go: the store, or a stand-in in tests.
///
/// `Sendable`: the commit stage calls ``append(_:checkpoint:)`` on its own thread, one call at a time, while
/// ``checkpoint(for:)`` is asked on the parsing thread only when no append is in flight.
protocol IngestSink: AnyObject, Sendable {
    /// Appends `events` and, in the same transaction, records `checkpoint` (if any), so that either both are
    /// durable or neither is. Before anything is written, the transaction reads the checkpoint stored under its
    /// key: when it is not ``BatchCheckpoint/expected``, another ingest of the same input moved it since this
    /// run read or wrote it, and the append throws ``CheckpointMoved`` with nothing stored.
    /// - Returns: how many were stored, and how many were skipped as duplicates of stored events.
    func append(_ events: [Event], checkpoint: BatchCheckpoint?) throws -> (inserted: Int, duplicates: Int)
    /// The checkpoint stored under `key`, if any.
    func checkpoint(for key: String) throws -> [UInt8]?
}

/// The checkpoint a batch of a regular file is committed with.
struct BatchCheckpoint: Sendable {
    /// The input's key (``Ingester``: its device and inode).
    var key: String
    /// Where the input got to after the batch (``FileCheckpoint/bytes``).
    var value: [UInt8]
    /// What this run last read or committed under `key` (`nil`: nothing), which the batch replaces.
    var expected: [UInt8]?
}

/// Another ingest of the same input committed under its checkpoint key after this run read or wrote it: the
/// batch that found out was not stored (storing it would store its lines twice, as events without an event id
/// have nothing else to tell them apart).
struct CheckpointMoved: Error, CustomStringConvertible {
    /// The input's name (filled in by ``Ingester``).
    var input = ""
    /// Whether the input is a batch file (its checkpoint counts events, not lines).
    var isBatchFile = false
    var expected: [UInt8]?
    var found: [UInt8]?

    var description: String {
        "another ingest of \(input) moved its checkpoint from \(place(expected)) to \(place(found)); "
            + "nothing of this batch was stored"
    }

    private func place(_ value: [UInt8]?) -> String {
        guard let value else { return "the start of the file" }
        guard let cp = FileCheckpoint(value) else { return "an unreadable checkpoint" }
        return isBatchFile ? "event \(cp.line)" : "line \(cp.line) (byte \(cp.offset))"
    }
}
