import BoardwalkModel

/// Checks the cancellation flag every 4096 events.
struct CancellationTicker {
    let cancellation: CancellationFlag?
    let text: String
    var sinceCheck = 0

    @inline(__always)
    mutating func tick() throws(QueryError) {
        try tick(1)
    }

    /// Counts `events` at once: a lean scan counts a run's events in a register and ticks once per run (a
    /// block's events at most), instead of updating the count in memory for each.
    @inline(__always)
    mutating func tick(_ events: Int) throws(QueryError) {
        sinceCheck &+= events
        if sinceCheck >= 4096 {
            sinceCheck = 0
            try cancellation?.throwIfCancelled(query: text)
        }
    }
}

extension CancellationFlag {
    /// Throws ``QueryError/Kind/cancelled`` for the query `text` when the flag is set.
    func throwIfCancelled(query text: String) throws(QueryError) {
        if isCancelled { throw QueryError(.cancelled, "the query was cancelled", in: text) }
    }
}
