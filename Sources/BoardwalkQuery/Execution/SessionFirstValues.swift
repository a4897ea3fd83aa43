import BoardwalkCodec
import BoardwalkStore

/// The first `profile`, `placement` and `variation` of each session of a fold of the session index
/// (``FoldNeeds/firstValues``), by the fold's slot: the first value any of the session's events carries in
/// `(time, seq)` order, as ``SessionSummary/add(_:)`` takes it; ``RecordFormat/absent`` for none.
/// Only the fields the query reads are kept.
///
/// Each session's earliest event (``WholeStoreScan/earliest``) is read first, all of them in one walk of the blocks in
/// key order (``Snapshot/forEachRecord(at:_:)``): on the stores this project sees every event carries all three or
/// none, and a session's earliest event settles them. A session whose earliest event lacks a field the query reads is
/// then read whole through the session index, in `(time, seq)` order, until its events have given each such field or
/// run out.
struct SessionFirstValues {
    private(set) var profiles: [StringID] = []
    private(set) var placements: [StringID] = []
    private(set) var variations: [StringID] = []

    /// Reads the first values `needs` asks for of the sessions `ids`, whose earliest events are at `earliest` (both by
    /// slot).
    /// - Throws: ``StoreError`` for damage met, `QueryError` when the query is cancelled.
    /// - Complexity: O(s log s) for s sessions, one walk of the blocks that hold their earliest events, and a read
    ///   through the session index of each session whose earliest event lacks a field.
    init(
        _ snapshot: Snapshot, earliest: [EventAddress], ids: [StringID], needs: FoldNeeds,
        ticker: inout CancellationTicker
    ) throws {
        precondition(earliest.count == ids.count, "an earliest event for every session")
        let absent = RecordFormat.absent
        var profiles = needs.profile ? [StringID](repeating: absent, count: ids.count) : []
        var placements = needs.placement ? [StringID](repeating: absent, count: ids.count) : []
        var variations = needs.variation ? [StringID](repeating: absent, count: ids.count) : []
        /// Takes each field of `fields` that the session at `slot` lacks; returns whether it lacks none now.
        func take(_ fields: RecordFields, slot: Int) -> Bool {
            var settled = true
            if needs.profile, profiles[slot] == absent {
                if let value = fields.profile { profiles[slot] = value } else { settled = false }
            }
            if needs.placement, placements[slot] == absent {
                if let value = fields.placement { placements[slot] = value } else { settled = false }
            }
            if needs.variation, variations[slot] == absent {
                if let value = fields.variation { variations[slot] = value } else { settled = false }
            }
            return settled
        }
        var unsettled: [StringID: Int] = [:]
        try snapshot.forEachRecord(at: earliest) { slot, record in
            if !take(try record.fields(.all), slot: slot) { unsettled[ids[slot]] = slot }
            try ticker.tick()
            return true
        }
        if !unsettled.isEmpty {
            try snapshot.forEachSession(unsettled.keys.sorted()) { id, records in
                guard let slot = unsettled[id] else { return true }
                try ticker.tick(records.count)
                for record in records where take(try record.fields(.all), slot: slot) { break }
                return true
            }
        }
        self.profiles = profiles
        self.placements = placements
        self.variations = variations
    }

    /// Whether no two distinct values of a field compare equal as Swift strings (canonically equivalent spellings):
    /// else a group of them takes the spelling of the session delivered first, which must then be the key order's.
    /// - Complexity: O(distinct values), each resolved through `strings` (which the summaries then reuse).
    func spellingsAreDistinct(_ strings: SnapshotStrings) -> Bool {
        [profiles, placements, variations].allSatisfy { values in
            // Distinct ids through a bitmap: a hash per slot cost 6 M instructions at 50 000 sessions.
            var seen = SessionBitmap()
            let ids = values.filter { $0 != RecordFormat.absent && seen.insert($0) }
            return Set(ids.map { strings.string($0) }).count == ids.count
        }
    }

    /// Gives the summary of the session at `slot` its first values.
    func apply(slot: Int, to summary: SessionSummary, strings: SnapshotStrings) {
        let absent = RecordFormat.absent
        if !profiles.isEmpty, profiles[slot] != absent { summary.profile = strings.string(profiles[slot]) }
        if !placements.isEmpty, placements[slot] != absent { summary.placement = strings.string(placements[slot]) }
        if !variations.isEmpty, variations[slot] != absent { summary.variation = strings.string(variations[slot]) }
    }
}

/// What a fold of the session index reads beside the index (``FoldNeeds/firstValues``, ``FoldNeeds/eventFlags``),
/// given to each session's summary.
struct SessionIndexExtras {
    var firstValues: SessionFirstValues?
    let flags: [SessionEventFlag.Matcher]
    /// By flag, the sessions with an event that sets it.
    var flagSets: [SessionBitmap] = []

    /// Gives the summary of the session at `slot` (`id`) its first values and flags.
    @inline(__always)
    func apply(slot: Int, id: StringID, to summary: SessionSummary, strings: SnapshotStrings) {
        firstValues?.apply(slot: slot, to: summary, strings: strings)
        for (flag, set) in zip(flags, flagSets) where set.contains(id) { flag.mark(summary) }
    }
}

extension StoreEventSource {
    /// Reads what `needs` asks of the sessions of `scan`, a fold of the session index, beside the index: their first
    /// values and the sessions with each flag. The two reads run on two threads when ``threads`` allows it and the
    /// query needs both (each reads its own snapshot of the same commit), else one after the other.
    /// - Complexity: as ``SessionFirstValues/init(_:earliest:ids:needs:ticker:)`` and
    ///   ``sessions(_:with:strings:ticker:)``.
    func sessionIndexExtras(
        _ snapshot: Snapshot, _ scan: WholeStoreScan, needs: FoldNeeds, cancellation: CancellationFlag?, text: String
    ) throws -> SessionIndexExtras {
        enum Read { case firstValues, flags }
        var reads: [Read] = []
        if needs.firstValues { reads.append(.firstValues) }
        if !needs.eventFlags.isEmpty { reads.append(.flags) }
        var extras = SessionIndexExtras(flags: needs.eventFlags.map(SessionEventFlag.Matcher.init))
        func read(_ part: Read, _ snapshot: Snapshot, into extras: inout SessionIndexExtras) throws {
            var ticker = CancellationTicker(cancellation: cancellation, text: text)
            switch part {
            case .firstValues:
                extras.firstValues = try SessionFirstValues(
                    snapshot, earliest: scan.earliest, ids: scan.ids, needs: needs, ticker: &ticker)
            case .flags:
                extras.flagSets =
                    try StoreEventSource.sessions(
                        snapshot, with: needs.eventFlags, strings: SnapshotStrings(snapshot), ticker: &ticker
                    ).sets
            }
        }
        if reads.count > 1, StoreEventSource.threads > 1 {
            var done = false
            _ = try withSnapshots(of: snapshot, extra: reads.count - 1, retry: false) { snapshots in
                guard snapshots.count == reads.count else { return }
                var states = [SessionIndexExtras](repeating: extras, count: snapshots.count)
                try StoreEventSource.runWorkers(snapshots, reads, &states) { state, snapshot, part in
                    try read(part, snapshot, into: &state)
                }
                for state in states {
                    if let values = state.firstValues { extras.firstValues = values }
                    if !state.flagSets.isEmpty { extras.flagSets = state.flagSets }
                }
                done = true
            }
            if done { return extras }
        }
        for part in reads { try read(part, snapshot, into: &extras) }
        return extras
    }
}
