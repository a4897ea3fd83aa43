import BoardwalkModel

/// What the executor needs from a session fold beyond the session fields every query may read.
struct FoldNeeds {
    /// The session's id string (listing orders by it; `session` reads it).
    var name = false
    /// String fields resolved for the summary; the others stay absent (nothing reads them).
    var profile = false
    var placement = false
    var variation = false
    var onboarding = false
    /// Last-write-wins answers (`answer(…)`).
    var answers = false
    /// The elements whose answers the query reads (each `answer("…")`'s): a fold keeps only theirs (a session
    /// answers a handful of questions, and a dictionary entry for each took most of a full fold's memory).
    var answerElements: [String] = []
    /// When each screen index was first reached (the screen funnel).
    var reachTimes = false
    /// The session's last event and last screen (`ended`, `duration`, `last_screen`, or a listing): a lean fold
    /// that need not keep them skips two comparisons per event, and its summaries leave them at their initial values.
    var lasts = true
    /// Breakdown columns of a screen funnel, evaluated on the session's first event with a screen index.
    var funnelBy: [BoundColumn] = []
    /// Breakdown columns of a screen funnel that read only the session's properties
    /// (``CheckedQuery/screenFunnelBySession``), evaluated on its summary (``sessionKeys(_:)``).
    var sessionBy: [BoundColumn] = []
    /// A funnel of custom steps read by a fold (not ``CheckedQuery/needsSessionRows``): each session keeps its
    /// events that match a step (``StepEvent``).
    var stepTests: StepTests?
    var now = Timestamp(microseconds: 0)
    /// Whether the query reads only the session fields a fold of each event's time, screen, total screens and
    /// session gives (``SessionFold/isLean(_:)``): then the store reads only those of each record, and the
    /// fold skips the rest (the summary's other fields keep their initial values, and nothing reads them).
    var lean = false
    /// A lean fold that also keeps which kinds and known analytics names each session saw and its outcome
    /// (rule 8): what `completed`, `paywall`, `closed`, `email_collected`, `exit` and `did(…)` of a kind or a
    /// known name read (``SessionFold/isLeanWithOutcomes(_:)``). Records are then read to their kind-specific
    /// field (`RecordFields.Extent.all`) instead of to their session.
    var leanOutcomes = false
    /// The query reads only what a fold of the whole store can take from the session index and a few reads beside it,
    /// so that it reads the index instead of every event block (``WholeStoreScan/scanSessionIndex(_:buckets:firstsOnly:onboardings:)``):
    /// the fields the references (each event's onboarding, screen, time and seq) give, the first `profile`,
    /// `placement` and `variation` (``firstValues``) and the flags the blocks' kind counts give (``eventFlags``). No
    /// outcome (`exit`), answer, reach time, `total_screens` or funnel. The fold is then lean
    /// (``readingSessionIndex``) whatever ``lean`` says: ``lean`` is for the other reads, which take these fields from
    /// the events.
    var fromSessionIndex = false
    /// Of ``fromSessionIndex``: the query reads `profile`, `placement` or `variation`, the first value any of a
    /// session's events carries. Each is read from the session's earliest event, found through its references
    /// (every event of the stores this project sees carries all three when it carries one); a session whose earliest
    /// event lacks one is read whole, in `(time, seq)` order, for it.
    var firstValues = false
    /// Of ``fromSessionIndex``: the flags the query reads (`completed`, `paywall`, `closed`, `email_collected`,
    /// `did(x)` of an analytics name), each read from the event blocks whose kind counts hold an event that sets it
    /// (``StoreEventSource/sessions(_:with:strings:ticker:)``).
    var eventFlags: [SessionEventFlag] = []
    /// Of ``fromSessionIndex``: the query reads no session field but `started`, `onboarding`, first values and flags,
    /// and what it computes does not depend on the order sessions are delivered in (counts, and stats without `sum` or
    /// `avg`). Each index run (one session's references from one batch) ascends in `(time, seq)`, so a session's
    /// `started` (and its earliest event) is the earliest of its runs' first references and its onboarding that of the
    /// earliest of its runs' first references with a screen: a fold reads those and skips the rest of each run by its
    /// length, and delivers sessions in the order it met them (in key order instead when two onboardings or two first
    /// values are spelled apart but compare equal as Swift strings, whose group keeps the spelling met first).
    var firstsOnly = false
    /// The query reads no session field but `profile`, and its answer does not depend on the order of the sessions:
    /// over the whole store, every session's profile comes from the `session_names` index, with no event read
    /// (``StoreEventSource/sessionProfiles(_:strings:sessions:ticker:)``).
    var profilesOnly = false

    init() {}

    /// A screen funnel's breakdown values for a session, from its summary (``sessionBy``): each column's session
    /// properties read on the summary, as a funnel over session rows reads them.
    func sessionKeys(_ summary: SessionSummary) -> [Value] {
        sessionBy.map { column in
            column.bound.evaluate(now: now) { leaf in
                if case .ofSession(let property) = leaf { return summary.leaf(property) }
                return .null
            }
        }
    }

    init(_ query: CheckedQuery, now: Timestamp) {
        self.now = now
        var bounds = query.filters + query.rowColumns.map(\.bound)
        switch query.reduction {
        case .count(let by): bounds += by.map(\.bound)
        case .stats(let aggregates, let by, _): bounds += aggregates.compactMap(\.argument) + by.map(\.bound)
        case .top(_, let key): bounds.append(key.bound)
        case .histogram(let value, _): bounds.append(value.bound)
        case .funnel(let f):
            reachTimes = f.steps.isEmpty
            // Which onboarding each session is of: the note on a screen funnel that mixes onboardings of different
            // lengths (rule 3) compares them, with or without a filter that reads it.
            onboarding = f.steps.isEmpty
            if query.screenFunnelBySession {
                sessionBy = f.by
                // The summary must hold what the columns read: their properties count as bounds of the fold.
                for column in f.by {
                    _ = column.bound.contains { leaf in
                        if case .ofSession(let property) = leaf { bounds.append(property) }
                        return false
                    }
                }
            } else if f.steps.isEmpty {
                funnelBy = f.by
            } else if !query.needsSessionRows {
                // The breakdown of a custom funnel is read on its step events, not on the first screen event.
                stepTests = StepTests(FunnelMatcher(funnel: f, now: now))
            }
        case .paths: break  // read as session rows (``CheckedQuery/needsSessionRows``)
        case nil: name = true  // listed rows are ordered by (started, session)
        }
        // Lean: a reduction (a listing shows every field) that is not a custom funnel (it matches each session's
        // events) nor a screen funnel broken down by event fields, over bounds that read no other session field.
        let isCustomFunnel = if case .funnel(let f) = query.reduction { !f.steps.isEmpty } else { false }
        /// Whether any bound reads a leaf for which `beyond` holds.
        func reads(_ beyond: (Bound) -> Bool) -> Bool { bounds.contains { $0.contains(where: beyond) } }
        func readsMore(_ outcomes: Bool) -> Bool {
            reads { leaf in
                switch leaf {
                case .session(let field):
                    !(SessionFold.isLean(field) || outcomes && SessionFold.isLeanWithOutcomes(field))
                // Names outside the known list are kept as strings, by full folds only.
                case .did(let x):
                    !(outcomes && (EventKind(rawValue: x) != nil || AnalyticsName(rawValue: x) != nil))
                case .event, .answer: true
                default: false
                }
            }
        }
        lean = query.reduction != nil && !isCustomFunnel && funnelBy.isEmpty && !readsMore(true)
        leanOutcomes = lean && readsMore(false)
        fromSessionIndex =
            query.reduction != nil && !isCustomFunnel && funnelBy.isEmpty && !reachTimes
            && !reads { leaf in
                switch leaf {
                case .session(let field): !FoldNeeds.sessionIndexGives(field)
                // A kind's name is also matched by an analytics event of that name (`SessionSummary.didSee`), which
                // one flag does not say.
                case .did(let x): EventKind(rawValue: x) != nil
                case .event, .answer, .ofSession, .column: true
                default: false
                }
            }
        /// Whether the bounds read anything but constants and the session fields `allowed`.
        func readsBeyond(_ allowed: Set<SessionField>) -> Bool {
            reads { leaf in
                switch leaf {
                case .session(let field): !allowed.contains(field)
                case .event, .answer, .did, .reached, .ofSession, .column: true
                default: false
                }
            }
        }
        let orderFree: Bool =
            switch query.reduction {
            case .count, .top, .histogram: true
            case .stats(let aggregates, _, _): !aggregates.contains { $0.function == .sum || $0.function == .avg }
            default: false
            }
        firstsOnly =
            fromSessionIndex && orderFree
            && !reads { leaf in
                switch leaf {
                case .session(let field): !FoldNeeds.firstReferencesGive(field)
                case .did: false  // a flag (any other `did` keeps the query off the index)
                case .event, .answer, .reached, .ofSession, .column: true
                default: false
                }
            }
        profilesOnly = orderFree && !readsBeyond([.profile])
        let lastFields: [Bound] = [.session(.ended), .session(.duration), .session(.lastScreen)]
        lasts = query.reduction == nil || bounds.contains { $0.contains(where: lastFields.contains) }
        for b in bounds {
            if b.contains(where: { $0 == .session(.session) }) { name = true }
            if b.contains(where: { $0 == .session(.profile) }) { profile = true }
            if b.contains(where: { $0 == .session(.placement) }) { placement = true }
            if b.contains(where: { $0 == .session(.variation) }) { variation = true }
            if b.contains(where: { $0 == .session(.onboarding) }) { onboarding = true }
            _ = b.contains { leaf in
                if case .answer(let element) = leaf {
                    answers = true
                    if !answerElements.contains(element) { answerElements.append(element) }
                }
                return false
            }
        }
        firstValues = fromSessionIndex && (profile || placement || variation)
        if fromSessionIndex {
            for b in bounds {
                _ = b.contains { leaf in
                    let flag: SessionEventFlag? =
                        switch leaf {
                        case .session(let field): SessionEventFlag(.session(field))
                        case .did: SessionEventFlag(leaf)
                        default: nil
                        }
                    if let flag, !eventFlags.contains(flag) { eventFlags.append(flag) }
                    return false
                }
            }
        }
    }

    /// Whether a fold of the session index gives `field` (``fromSessionIndex``).
    static func sessionIndexGives(_ field: SessionField) -> Bool {
        switch field {
        case .session, .onboarding, .started, .ended, .duration, .events, .furthestScreen, .lastScreen: true
        case .profile, .placement, .variation, .completed, .paywall, .closed, .emailCollected: true
        case .totalScreens, .exit: false
        }
    }

    /// Whether a fold of each index run's first references gives `field` (``firstsOnly``).
    static func firstReferencesGive(_ field: SessionField) -> Bool {
        switch field {
        case .started, .onboarding, .profile, .placement, .variation, .completed, .paywall, .closed, .emailCollected:
            true
        case .session, .ended, .duration, .events, .furthestScreen, .lastScreen, .totalScreens, .exit: false
        }
    }

    /// These needs for the fold of the session index (``fromSessionIndex``): a lean fold without outcomes, whose
    /// summaries get their first values and flags from the reads beside it.
    var readingSessionIndex: FoldNeeds {
        var needs = self
        needs.lean = true
        needs.leanOutcomes = false
        return needs
    }
}
