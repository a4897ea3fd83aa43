import Boardwalk

/// The store as an ingest target.
final class StoreSink: IngestSink {
    let store: Store
    /// `ingest --keep-identical`: events without an event id are never duplicates.
    let keepIdentical: Bool
    init(store: Store, keepIdentical: Bool = false) {
        self.store = store
        self.keepIdentical = keepIdentical
    }

    func append(_ events: [Event], checkpoint: BatchCheckpoint?) throws -> (inserted: Int, duplicates: Int) {
        guard let checkpoint else {
            let result = try store.append(events, keepIdentical: keepIdentical)
            return (result.appended, result.duplicates)
        }
        // The checkpoint is read again inside the write transaction: writers are serialized, so no other ingest
        // can move it between this read and the commit.
        let result = try store.write { w in
            let found = try w.snapshot.checkpoint(checkpoint.key)
            guard found == checkpoint.expected else {
                throw CheckpointMoved(expected: checkpoint.expected, found: found)
            }
            let result = try w.append(events, keepIdentical: keepIdentical)
            try w.setCheckpoint(Checkpoint(key: checkpoint.key, value: checkpoint.value))
            return result
        }
        return (result.appended, result.duplicates)
    }

    func checkpoint(for key: String) throws -> [UInt8]? {
        try store.read { try $0.checkpoint(key) }
    }
}
