import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

/// The LMDB store as an ``EventSource``: event scans read only the key ranges of the plan; sessions are folded
/// from scans of their onboardings' keys, or read whole, gathered from such scans or through the store's
/// session index, whichever costs less.
///
/// Each scan runs in one read transaction (``Store/read(_:)``), so it sees one consistent snapshot and never
/// blocks or modifies writers. Scans hand out ``StoreEventRow``s, which read fields from the borrowed record
/// views on demand (strings resolved once per scan); no owned ``Event`` is built.
public struct StoreEventSource: EventSource, Sendable {
    /// The store the source reads.
    public let store: Store

    /// How many events the onboardings in scope must hold per (onboarding, session) pair of the store before a
    /// `sessions` query on whole onboardings scans their key ranges rather than reading each session through the
    /// session index (see `foldOnboardings`). 0, the default, always scans: the scan reads only the scope's
    /// sessions and events plus the store's spanning sessions, about 400 instructions per event for a screen
    /// funnel (1 200-1 500 when each event was read through a full `RecordView`), against about 1 650 per event
    /// for the batched session-index read (`Snapshot.forEachSession`), record decoding included. Tests bind
    /// infinity to force the session index path and compare. Task-local rather than a stored property: clients
    /// compiled against the struct's layout stay valid.
    @TaskLocal static var onboardingScanRatio = 0.0
    /// How many scanned events one event read through the session index costs, when the flags of the sessions of a
    /// few onboardings (`session.completed`, …) are read from those onboardings' blocks and the sessions spanning
    /// onboardings are read through the index (see `sessions(with:in:cancellation:text:)`): about 16 (see
    /// ``onboardingScanRatio``). Tests bind 0 to take that read whenever it skips any block, and infinity to read
    /// every block of the store.
    @TaskLocal static var flagScopeIndexCost = 16.0
    /// The share of the store's events, as `flagsAreFew` estimates it from the blocks' headers, up to which a
    /// whole-store `sessions` fold reads its flags from the blocks that hold their events beside the session index
    /// rather than folding every event: 1. Tests bind infinity to always take the session index.
    @TaskLocal static var flagReadShare = 1.0

    /// A source that reads `store`; cheap to make, and `Sendable`: one may serve every task that queries.
    public init(_ store: Store) { self.store = store }

    /// How the store reads sessions, for `explain`.
    public var sessionAccess: String {
        "store's session index (session, time, seq); sessions of a whole onboarding from its onboarding_sessions index"
    }

    /// Runs `body`, turning store errors into ``QueryError``s of kind `.source`.
    func reading(_ body: (Snapshot) throws -> Void) throws(QueryError) {
        do {
            guard let damaged = StoreEventSource.damagedBlocks else { return try store.read(body) }
            try store.read(aroundDamage: damaged, body)
        } catch let error as QueryError {
            throw error
        } catch {
            // Damage LMDB met on its own pages: LMDB's text alone says nothing of what to do.
            let damage =
                (error as? StoreError)?.meansDamage == true
                ? "; the store's file is damaged: `boardwalk check` lists the damage, `boardwalk export --salvage` reads what is left"
                : ""
            throw QueryError(.source, "the store failed while the query ran: \(error)" + damage)
        }
    }

    /// The interned id of onboarding `name`, from the store's list of onboardings; nil when it has no events.
    ///
    /// Not `Snapshot.id(of:)`: depending on the store's version that can load every string of the store into
    /// memory on first use (measured: 42 % of a median-size onboarding's funnel at 100 k sessions), while the
    /// onboardings are a few dozen entries.
    static func onboardingID(_ snapshot: Snapshot, _ name: String) throws -> StringID? {
        try snapshot.onboardings().first { $0.onboardingID == name }?.id
    }

    /// The string of session id `id`.
    /// - Throws: ``QueryError`` of kind `.source` when the store's dictionary does not hold it.
    static func sessionName(_ snapshot: Snapshot, _ id: StringID) throws(QueryError) -> String {
        guard let name = snapshot.string(for: id) else {
            throw QueryError(.source, "session id \(id) is not in the store's dictionary")
        }
        return name
    }

    /// Calls `body` for the views in `range`; returns false when `body` asked to stop.
    @discardableResult
    private static func scan(_ snapshot: Snapshot, _ range: ScanRange, _ body: (EventView) throws -> Bool) throws
        -> Bool
    {
        try forEachRun(snapshot, range) { run in
            while let record = try run.next() {
                guard try body(try record.view()) else { return false }
            }
            return true
        }
    }

    /// Calls `body` for every stored event in `range`, in key order, inside one read transaction.
    /// - Throws: ``QueryError`` of kind `.source` when the store fails, or what `body` throws.
    /// - Complexity: O(events in the range), seeking per screen inside it.
    public func scanEvents(_ range: ScanRange, _ body: (StoreEventRow) throws(QueryError) -> Bool) throws(QueryError) {
        try reading { snapshot in
            let strings = SnapshotStrings(snapshot)
            try StoreEventSource.scan(snapshot, range) { view in
                try body(StoreEventRow(view: view, strings: strings))
            }
        }
    }

    /// The onboarding ids with events in the store, from its list of onboardings (one entry each).
    public func onboardingNames() throws(QueryError) -> [String]? {
        var names: [String] = []
        try reading { snapshot in names = try snapshot.onboardings().compactMap(\.onboardingID) }
        return names
    }

    /// The number of distinct sessions in the store, from the counter the writer keeps (``StoreStats/sessions``).
    /// - Complexity: O(1): a few keys of the `meta` database.
    func sessionCount() throws(QueryError) -> Int {
        var count = 0
        try reading { snapshot in count = try snapshot.stats().sessions }
        return count
    }

    /// Where the reads of a run with ``Query/RunOptions/ignoreDamaged`` record the damaged blocks they step over;
    /// `nil` (the default): a damaged block stops the run. Task-local, as ``onboardingScanRatio``: the option is
    /// the run's, not the source's, and a run reads on the thread that runs it.
    @TaskLocal static var damagedBlocks: DamagedBlocks? = nil

    /// How many seqs of the pass over late arrivals a session read through the index is taken to cost, when a
    /// scan from a time on moves the sessions met by the lowest seqs to the index (see `FirstMet`); tests bind 0
    /// to move them whenever they are below the others. Task-local, as ``onboardingScanRatio``.
    @TaskLocal static var lateArrivalSeqsPerIndexRead = 4096

    /// The references a batch of the session index path aims at (`Snapshot.defaultSessionBatchReferences`) when
    /// ``scanSessions(_:_:)`` reads sessions through the index; tests bind small values to read many batches.
    /// Task-local, as ``onboardingScanRatio``.
    @TaskLocal static var sessionBatchReferences = Snapshot.defaultSessionBatchReferences
}
