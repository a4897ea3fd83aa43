import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

/// A session property that says only whether the session has an event of some kind or analytics name:
/// `session.completed` (an `onboarding_completed`), `session.paywall` (an `open_paywall`), `session.closed` (a
/// `close`), `session.email_collected` (a `user_email_collected`) and `session.did(x)`, as ``SessionSummary`` gives
/// them.
enum SessionEventFlag: Hashable {
    /// An event of this kind.
    case kind(EventKind)
    /// An analytics event with this name, known or not.
    case name(String)

    /// The flag `property` (a session property of a query: the operand of ``Bound/ofSession(_:)``) reads; nil for
    /// any other property.
    init?(_ property: Bound) {
        switch property {
        case .session(.completed): self = .name(AnalyticsName.onboardingCompleted.rawValue)
        case .session(.emailCollected): self = .name(AnalyticsName.userEmailCollected.rawValue)
        case .session(.paywall): self = .kind(.openPaywall)
        case .session(.closed): self = .kind(.close)
        case .did(let x):
            // As `SessionSummary.didSee(_:)`: a kind's name first, else an analytics name.
            self = EventKind(rawValue: x).map(SessionEventFlag.kind) ?? .name(x)
        default: return nil
        }
    }

    /// Tells the events that set a flag by their kind codes (``RecordFormat/kindCode(body:)``, a block's kind counts),
    /// with the flag's kind and known name code worked out once: a test per event of the blocks read compares bytes,
    /// and strings only for an analytics name outside the known ones.
    struct Matcher {
        let flag: SessionEventFlag
        /// The kind whose events set the flag (`.analytics` for a name).
        private let kind: EventKind
        /// For a name: the known name it is, or nil for a name outside them.
        private let knownName: AnalyticsName?

        init(_ flag: SessionEventFlag) {
            self.flag = flag
            switch flag {
            case .kind(let k):
                kind = k
                knownName = nil
            case .name(let text):
                kind = .analytics
                knownName = AnalyticsName(rawValue: text)
            }
        }

        /// Whether an event of kind code `code` (`name`: an analytics name outside the known ones) sets the flag.
        @inline(__always)
        func matches(code: UInt8, name: StringID?, strings: SnapshotStrings) -> Bool {
            guard code != RecordFormat.unclassifiedKindCode, EventKind(code: code >> 4) == kind else { return false }
            guard case .name(let text) = flag else { return true }
            // A name outside the known codes: a store can hold a known name so (sent as an unknown one).
            if let name { return strings.string(name) == text }
            return knownName?.code == code & 0x0F
        }

        /// Records in `summary` that the session has an event that sets the flag, as ``SessionSummary/add(_:)``
        /// records such an event.
        func mark(_ summary: SessionSummary) {
            switch flag {
            case .kind(let kind):
                summary.markSeen(kind)
                if kind == .openPaywall { summary.paywall = true }
                if kind == .close { summary.closed = true }
            case .name(let name):
                guard let known = knownName else { return summary.markSeen(name) }
                summary.namesSeen |= SessionSummary.bit(known)
                if known == .onboardingCompleted { summary.completed = true }
                if known == .userEmailCollected { summary.emailCollected = true }
            }
        }
    }
}

extension StoreEventSource {
    /// The sessions that have an event setting each of `flags`, as bit sets by the session's interned id, for at least every session with an event in `ranges`: the blocks whose header
    /// counts such an event are read, the others are not (their headers are checked, as
    /// ``Snapshot/forEachBlock(onboarding:screens:time:_:)`` checks them).
    ///
    /// When the ranges lie in a few onboardings, only those onboardings' blocks and the blocks of events without a
    /// position are read, and the sessions with events in several onboardings (`spanning_sessions`) are read whole
    /// through the session index: a session listed nowhere else has every event in its onboarding's key range. That
    /// is chosen when it reads fewer events than the whole store, at ``flagScopeIndexCost`` scanned events per event
    /// read through the index; else, and for ranges of every onboarding, every block of the store is looked at.
    /// - Returns: the sets, in `flags` order, and the events read.
    /// - Throws: `.source` errors for damage.
    /// - Complexity: O(blocks) headers, plus O(events) of the blocks that hold a flag's events; memory, a bit per
    ///   interned string up to the largest session id found, per flag.
    func sessions(
        with flags: [SessionEventFlag], in ranges: [ScanRange] = [ScanRange()], cancellation: CancellationFlag?,
        text: String
    ) throws(QueryError) -> (sets: [SessionBitmap], events: Int) {
        var found: (sets: [SessionBitmap], events: Int) = ([], 0)
        try reading { snapshot in
            var ticker = CancellationTicker(cancellation: cancellation, text: text)
            let strings = SnapshotStrings(snapshot)
            if let scope = try StoreEventSource.flagScope(snapshot, ranges) {
                found = try StoreEventSource.sessions(
                    snapshot, with: flags, onboardings: scope.onboardings, spanning: scope.spanning, strings: strings,
                    ticker: &ticker)
            } else {
                found = try StoreEventSource.sessions(snapshot, with: flags, strings: strings, ticker: &ticker)
            }
        }
        return found
    }

    /// For ``sessions(with:in:cancellation:text:)``: the onboardings of `ranges` (with the key of events without a
    /// position) and the sessions in several onboardings, when reading their blocks and those sessions costs less
    /// than reading the whole store's; nil otherwise.
    private static func flagScope(_ snapshot: Snapshot, _ ranges: [ScanRange]) throws
        -> (onboardings: [StringID], spanning: [StringID])?
    {
        guard damagedBlocks == nil, !ranges.isEmpty, ranges.allSatisfy({ $0.onboarding != nil }) else { return nil }
        // The onboardings' ids from the store's list of them (a lookup of each name in the dictionary would load it).
        let all = try snapshot.onboardings()
        var onboardings: [StringID] = [RecordFormat.noOnboarding]
        for range in ranges {
            guard let id = all.first(where: { $0.onboardingID == range.onboarding })?.id else { continue }
            if !onboardings.contains(id) { onboardings.append(id) }
        }
        let storeEvents = all.reduce(0) { $0 + $1.events }
        let scopeEvents = all.reduce(0) {
            $0 + (onboardings.contains($1.id ?? RecordFormat.noOnboarding) ? $1.events : 0)
        }
        var spanning: [StringID] = []
        try snapshot.forEachSpanningSession { entry in
            if entry.inSeveralOnboardings { spanning.append(entry.id) }
        }
        let perSession = Double(storeEvents) / Double(max(1, try snapshot.stats().sessions))
        let indexCost = flagScopeIndexCost * perSession * Double(spanning.count)
        guard indexCost.isFinite, Double(scopeEvents) + indexCost < Double(storeEvents) else { return nil }
        return (onboardings, spanning)
    }

    /// The flags of the sessions of `onboardings` (``flagScope(_:_:)``): their blocks that hold a flag's events, and
    /// every event of the sessions `spanning`, read through the session index.
    private static func sessions(
        _ snapshot: Snapshot, with flags: [SessionEventFlag], onboardings: [StringID], spanning: [StringID],
        strings: SnapshotStrings, ticker: inout CancellationTicker
    ) throws -> (sets: [SessionBitmap], events: Int) {
        var found = (sets: [SessionBitmap](repeating: SessionBitmap(), count: flags.count), events: 0)
        let matchers = flags.map(SessionEventFlag.Matcher.init)
        for onboarding in onboardings {
            try addFlags(snapshot, matchers, onboarding: onboarding, strings: strings, ticker: &ticker, into: &found)
        }
        try snapshot.forEachSession(spanning.sorted()) { session, records in
            try ticker.tick(records.count)
            found.events += records.count
            for record in records {
                // Checks the record's references, the name's among them, as a read of a block's kinds does.
                _ = try record.fields(.all)
                let kind = RecordFormat.kindCode(body: record.body)
                let name = kind.name == RecordFormat.absent ? nil : kind.name
                for (i, matcher) in matchers.enumerated()
                where matcher.matches(code: kind.code, name: name, strings: strings) {
                    _ = found.sets[i].insert(session)
                }
            }
            return true
        }
        return found
    }

    /// ``sessions(with:in:cancellation:text:)`` over every block of `snapshot`.
    static func sessions(
        _ snapshot: Snapshot, with flags: [SessionEventFlag], strings: SnapshotStrings,
        ticker: inout CancellationTicker
    ) throws -> (sets: [SessionBitmap], events: Int) {
        var found = (sets: [SessionBitmap](repeating: SessionBitmap(), count: flags.count), events: 0)
        try addFlags(
            snapshot, flags.map(SessionEventFlag.Matcher.init), onboarding: nil, strings: strings, ticker: &ticker,
            into: &found)
        return found
    }

    /// Whether reading the sessions with `flags` from the blocks that hold their events costs less than a fold of every
    /// event of the store (`events` of them), from the blocks' headers alone: the events of the blocks the read opens
    /// (each one's kind code read) plus twice those that set a flag (each also read to its session and noted) must not
    /// exceed the store's events (times ``flagReadShare``). `onboarding_completed` or `user_email_collected` lie in a few screens' blocks; a
    /// name every screen sends (`did("screen_presented")`) is in every block and a third of the events, which a fold
    /// of every event reads for less (callgrind at 50 000 sessions: 1 096 M instructions that way, 1 531 M through
    /// the blocks and the session index).
    /// - Complexity: O(blocks), their headers only; stops once the estimate passes `events`.
    static func flagsAreFew(
        _ snapshot: Snapshot, _ flags: [SessionEventFlag], events: Int, strings: SnapshotStrings
    ) throws -> Bool {
        let share = flagReadShare
        guard share.isFinite else { return true }
        let limit = Double(events) * share
        let matchers = flags.map(SessionEventFlag.Matcher.init)
        var cost = 0.0
        try snapshot.forEachBlock(onboarding: nil) { block in
            var setting = 0
            try block.forEachKindCount { code, name, count in
                if matchers.contains(where: { $0.matches(code: code, name: name, strings: strings) }) {
                    setting += count
                }
            }
            if setting > 0 { cost += Double(block.count + 2 * setting) }
            return cost <= limit
        }
        return cost <= limit
    }

    /// Adds to `found` the sessions with an event of each matcher's flag in the blocks of `onboarding` (nil: every
    /// block), reading only the blocks whose kind counts hold such an event.
    private static func addFlags(
        _ snapshot: Snapshot, _ matchers: [SessionEventFlag.Matcher], onboarding: StringID?, strings: SnapshotStrings,
        ticker: inout CancellationTicker, into found: inout (sets: [SessionBitmap], events: Int)
    ) throws {
        /// Per flag, whether the block's header counts an event that sets it.
        var wanted = [Bool](repeating: false, count: matchers.count)
        try snapshot.forEachBlock(onboarding: onboarding) { block in
            var any = false
            for i in matchers.indices { wanted[i] = false }
            try block.forEachKindCount { code, name, _ in
                for (i, matcher) in matchers.enumerated()
                where matcher.matches(code: code, name: name, strings: strings) {
                    wanted[i] = true
                    any = true
                }
            }
            guard any else { return true }
            try ticker.tick(block.count)
            while try block.next() != nil {
                found.events += 1
                let kind = try block.kind()
                for (i, matcher) in matchers.enumerated()
                where wanted[i] && matcher.matches(code: kind.code, name: kind.name, strings: strings) {
                    guard let session = try block.record?.fields(.session).session else { break }
                    _ = found.sets[i].insert(session)
                }
            }
            return true
        }
    }
}
