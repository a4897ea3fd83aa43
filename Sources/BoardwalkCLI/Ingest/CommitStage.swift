import Boardwalk
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One batch handed from the parsing stage to the commit stage: events and the checkpoint of its last line.
struct PendingBatch: Sendable {
    var events: [Event]
    var checkpoint: BatchCheckpoint?
}

/// The commit stage of the ingest pipeline: a thread of its own that owns every `sink.append` of an input,
/// fed whole batches through a queue of at most `capacity` batches.
///
/// The parsing stage (the caller's thread) parses batch n+1 while this thread commits batch n. LMDB ties a
/// write transaction to the thread that began it, so every append runs here, start to commit, inside one
/// synchronous call. Memory stays flat: at most `capacity` batches queued or being committed, plus the one the
/// parser is filling; ``submit(_:)`` blocks while that many are in the stage.
///
/// After a failed append the stage commits nothing more: later batches are dropped (their lines come after the
/// failed batch's, and the last stored checkpoint is the one before it), and the next ``submit(_:)`` throws the
/// failure, which stops the parser. ``finish()`` must be called once, on every path: it waits for the queue
/// to drain and the thread to end.
///
/// With `threaded: false` the stage appends on the caller's thread inside ``submit(_:)``: the sequential path,
/// kept for comparison in tests and measurements.
final class CommitStage: Sendable {
    /// What the stage did.
    struct Outcome: Sendable {
        var inserted = 0
        var duplicates = 0
        /// The first append that failed; nothing was committed after it.
        var failure: (any Error)? = nil
    }

    private struct State: Sendable {
        var queue: [PendingBatch] = []
        var outcome = Outcome()
        var thread: pthread_t? = nil
    }

    private let sink: any IngestSink
    private let threaded: Bool
    private let state = Mutex(State())
    /// Free places in the queue.
    private let free: DispatchSemaphore
    /// Signalled once per queued batch, and once more by ``finish()`` to end the thread.
    private let ready = DispatchSemaphore(value: 0)

    /// Starts the stage (and its thread, when `threaded`).
    /// - Parameter capacity: batches that may be in the stage at once, queued or being committed (at least 1;
    ///   1 already lets parsing and committing overlap, 2 absorbs a slow commit without stalling the parser).
    init(sink: any IngestSink, threaded: Bool, capacity: Int = 1) {
        self.sink = sink
        self.threaded = threaded
        self.free = DispatchSemaphore(value: max(1, capacity))
        guard threaded else { return }
        // Without a thread (out of resources), `thread` stays nil and batches are committed on the caller's.
        if let thread = spawnThread({ [self] in self.commitLoop() }) {
            state.withLock { $0.thread = thread }
        }
    }

    /// The failure of an earlier append, if any.
    var failure: (any Error)? { state.withLock { $0.outcome.failure } }

    /// Hands `batch` to the commit thread, waiting while the queue is full.
    /// - Throws: the failure of an earlier append (the parser should stop).
    func submit(_ batch: PendingBatch) throws {
        if let failure { throw failure }
        guard state.withLock({ $0.thread != nil }) else {
            commit(batch)
            if let failure { throw failure }
            return
        }
        free.wait()
        state.withLock { $0.queue.append(batch) }
        ready.signal()
    }

    /// Waits until every submitted batch is committed (or dropped after a failure) and ends the thread.
    /// - Returns: what was committed, and the first failure.
    func finish() -> Outcome {
        if let thread = state.withLock({ s -> pthread_t? in
            defer { s.thread = nil }
            return s.thread
        }) {
            ready.signal()  // with the queue drained, this wake-up finds it empty and ends the loop
            pthread_join(thread, nil)
        }
        return state.withLock { $0.outcome }
    }

    private func commitLoop() {
        while true {
            ready.wait()
            // Batches are queued before their signal, so an empty queue here is finish()'s wake-up.
            guard let batch = state.withLock({ $0.queue.isEmpty ? nil : $0.queue.removeFirst() }) else { return }
            commit(batch)
            free.signal()
        }
    }

    private func commit(_ batch: PendingBatch) {
        guard failure == nil else { return }
        do {
            let result = try sink.append(batch.events, checkpoint: batch.checkpoint)
            state.withLock {
                $0.outcome.inserted += result.inserted
                $0.outcome.duplicates += result.duplicates
            }
        } catch {
            state.withLock { $0.outcome.failure = error }
        }
    }
}
