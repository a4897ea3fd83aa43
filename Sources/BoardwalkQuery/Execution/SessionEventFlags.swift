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
    /// The sessions that have an event setting each of `flags`, as bit sets by the session's interned id (bit
    /// `id & 63` of word `id >> 6`), over the whole store: the blocks whose header counts such an event are read,
    /// the others are not (their headers are checked, as ``Snapshot/forEachBlock(onboarding:screens:time:_:)`` checks
    /// them).
    /// - Returns: the sets, in `flags` order, and the events read.
    /// - Throws: `.source` errors for damage.
    /// - Complexity: O(blocks) headers, plus O(events) of the blocks that hold a flag's events; memory, a bit per
    ///   interned string up to the largest session id found, per flag.
    func sessions(with flags: [SessionEventFlag], cancellation: CancellationFlag?, text: String)
        throws(QueryError) -> (sets: [[UInt64]], events: Int)
    {
        var found: (sets: [[UInt64]], events: Int) = ([], 0)
        try reading { snapshot in
            var ticker = CancellationTicker(cancellation: cancellation, text: text)
            found = try StoreEventSource.sessions(
                snapshot, with: flags, strings: SnapshotStrings(snapshot), ticker: &ticker)
        }
        return found
    }

    /// ``sessions(with:cancellation:text:)`` in `snapshot`.
    static func sessions(
        _ snapshot: Snapshot, with flags: [SessionEventFlag], strings: SnapshotStrings,
        ticker: inout CancellationTicker
    ) throws -> (sets: [[UInt64]], events: Int) {
        var sets = [[UInt64]](repeating: [], count: flags.count)
        var events = 0
        /// Per flag, whether the block's header counts an event that sets it.
        var wanted = [Bool](repeating: false, count: flags.count)
        let matchers = flags.map(SessionEventFlag.Matcher.init)
        try snapshot.forEachBlock(onboarding: nil) { block in
            var any = false
            for i in flags.indices { wanted[i] = false }
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
                events += 1
                let kind = try block.kind()
                for (i, matcher) in matchers.enumerated()
                where wanted[i] && matcher.matches(code: kind.code, name: kind.name, strings: strings) {
                    guard let session = try block.record?.fields(.session).session else { break }
                    let word = Int(session >> 6)
                    if word >= sets[i].count { sets[i] += repeatElement(0, count: word + 1 - sets[i].count) }
                    sets[i][word] |= 1 << UInt64(session & 63)
                }
            }
            return true
        }
        return (sets, events)
    }
}

extension [UInt64] {
    /// Whether the bit set (bit `id & 63` of word `id >> 6`, as ``StoreEventSource/sessions(with:cancellation:text:)``
    /// gives them) holds `id`.
    @inline(__always)
    func holds(_ id: StringID) -> Bool {
        let word = Int(id >> 6)
        return word < count && self[word] >> UInt64(id & 63) & 1 != 0
    }
}
