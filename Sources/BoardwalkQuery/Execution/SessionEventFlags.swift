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

    /// Whether an event of kind code `code` (`RecordFormat.kindCode(body:)`; `name`, an analytics name outside the
    /// known ones) sets the flag.
    func matches(code: UInt8, name: StringID?, strings: SnapshotStrings) -> Bool {
        guard code != RecordFormat.unclassifiedKindCode, let kind = EventKind(code: code >> 4) else { return false }
        switch self {
        case .kind(let k): return kind == k
        case .name(let text):
            guard kind == .analytics else { return false }
            if let name { return strings.string(name) == text }
            return AnalyticsName(code: code & 0x0F)?.rawValue == text
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
        var sets = [[UInt64]](repeating: [], count: flags.count)
        var events = 0
        try reading { snapshot in
            let strings = SnapshotStrings(snapshot)
            var ticker = CancellationTicker(cancellation: cancellation, text: text)
            /// Per flag, whether the block's header counts an event that sets it.
            var wanted = [Bool](repeating: false, count: flags.count)
            try snapshot.forEachBlock(onboarding: nil) { block in
                var any = false
                for i in flags.indices { wanted[i] = false }
                try block.forEachKindCount { code, name, _ in
                    for (i, flag) in flags.enumerated() where flag.matches(code: code, name: name, strings: strings) {
                        wanted[i] = true
                        any = true
                    }
                }
                guard any else { return true }
                try ticker.tick(block.count)
                while try block.next() != nil {
                    events += 1
                    let kind = try block.kind()
                    for (i, flag) in flags.enumerated()
                    where wanted[i] && flag.matches(code: kind.code, name: kind.name, strings: strings) {
                        guard let session = try block.record?.fields(.session).session else { break }
                        let word = Int(session >> 6)
                        if word >= sets[i].count { sets[i] += repeatElement(0, count: word + 1 - sets[i].count) }
                        sets[i][word] |= 1 << UInt64(session & 63)
                    }
                }
                return true
            }
        }
        return (sets, events)
    }
}
