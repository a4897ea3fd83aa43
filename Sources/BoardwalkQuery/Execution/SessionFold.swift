import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

/// One session's ``SessionSummary``, folded from its events in any order.
///
/// Every "first" and "last" of the summary is kept with its `(time, seq)` position and replaced only by an
/// earlier (later) event, so the result equals folding the events in `(time, seq)` order: the store's key
/// order `(onboarding, screen, time, seq)` can feed it directly, with no per-session read. Strings stay
/// ``StringID``s until ``summary(name:strings:needs:)``.
/// Memory: a fixed part, plus one entry per distinct screen index (when reach times are needed) and per
/// answered element (when answers are needed).
struct SessionFold {
    var first = OrderKey.highest
    var last = OrderKey.lowest
    var events = 0
    var profileAt = OrderKey.highest
    var profile: StringID = 0
    var placementAt = OrderKey.highest
    var placement: StringID = 0
    var variationAt = OrderKey.highest
    var variation: StringID = 0
    /// The first event with a screen index: the session's onboarding, and a screen funnel's breakdown values.
    var firstScreenAt = OrderKey.highest
    var onboarding: StringID = 0
    var funnelKeys: [Value] = []
    var lastScreenAt = OrderKey.lowest
    var lastScreen = -1
    var totalScreens: Int?
    var furthest = -1
    /// The earliest time of each screen index seen, in arrival order (for reach times), with the screen client id
    /// of the first event folded there (``RecordFormat/absent``: none).
    var screenTimes: [(screen: Int32, time: Int64, client: StringID)] = []
    /// Whether `screenTimes` is in ascending screen order (as the store's key order appends them).
    var screensAscending = true
    /// With reach times: the session's other distinct (screen index, screen client id) pairs, as `screen << 32 | id`
    /// (a second client id at a screen index; rare).
    var otherClients: [UInt64] = []
    var completed = false
    var paywall = false
    var closed = false
    var emailCollected = false
    var kindsSeen: UInt32 = 0
    var namesSeen: UInt32 = 0
    var otherNames: [StringID] = []
    var outcomeAt = OrderKey.lowest
    var outcome: Exit?
    /// Element id → (position, answer) of the last state update.
    var answers: [StringID: (at: OrderKey, value: Value)] = [:]
    /// The events that match a step of the query's funnel (``FoldNeeds/stepTests``), in the order folded.
    var stepEvents: [StepEvent] = []

    /// Whether a lean fold (``LeanFolds/add(slot:_:seq:)``) folds `field` (`reached(n)` reads
    /// `furthest_screen`, which it does). A switch, not a `Set`: a set's metadata costs a process more to
    /// instantiate than a query on one onboarding spends per thousand events.
    static func isLean(_ field: SessionField) -> Bool {
        switch field {
        case .session, .onboarding, .started, .ended, .duration, .events, .furthestScreen, .lastScreen, .totalScreens:
            true
        case .profile, .placement, .variation, .completed, .paywall, .closed, .emailCollected, .exit: false
        }
    }

    /// Whether a lean fold that keeps outcomes (``FoldNeeds/leanOutcomes``) gives `field`, beyond
    /// ``isLean(_:)``: the fields the kinds and known analytics names seen, and the last terminal event, decide.
    static func isLeanWithOutcomes(_ field: SessionField) -> Bool {
        switch field {
        case .completed, .paywall, .closed, .emailCollected, .exit: true
        default: false
        }
    }

    /// Folds one event of the session index's reads (a full view).
    @inline(__always)
    mutating func add(_ view: EventView, strings: SnapshotStrings, needs: FoldNeeds) {
        // A full view already holds every field: `full` cannot fail.
        add(view.record, seq: view.seq, full: { view }, strings: strings, needs: needs)
    }

    /// Folds one event from the fields it reads; `full` decodes the whole event, which only answers and a
    /// screen funnel's breakdown columns need (for state updates, and for a session's first event with a
    /// screen index).
    @inline(__always)
    mutating func add<Fields: FoldFields, E: Error>(
        _ r: Fields, seq: UInt64, full: () throws(E) -> EventView,
        strings: SnapshotStrings, needs: FoldNeeds
    ) throws(E) {
        let at = OrderKey(time: r.time.microseconds, seq: seq)
        if at < first { first = at }
        if last < at { last = at }
        events += 1
        if let p = r.profile, at < profileAt { profileAt = at; profile = p }
        if let p = r.placement, at < placementAt { placementAt = at; placement = p }
        if let v = r.variation, at < variationAt { variationAt = at; variation = v }
        if let screen = r.screenIndex {
            if at < firstScreenAt {
                firstScreenAt = at
                onboarding = r.onboarding ?? 0
                if !needs.funnelBy.isEmpty {
                    funnelKeys = FunnelMatcher.values(
                        of: needs.funnelBy, on: StoreEventRow(view: try full(), strings: strings),
                        now: needs.now)
                }
            }
            if lastScreenAt < at { lastScreenAt = at; lastScreen = screen }
            if let t = r.totalScreens { totalScreens = max(totalScreens ?? t, t) }
            if screen > furthest { furthest = screen }
            if needs.reachTimes { noteScreen(screen, at.time, client: r.screenClientID ?? RecordFormat.absent) }
        }
        let kind = r.kind
        kindsSeen |= SessionSummary.bit(kind)
        var terminal: Exit?
        switch kind {
        case .analytics:
            var known = r.knownAnalyticsName
            if known == nil, case .unknown(let id)? = r.analyticsName {
                // A name outside the known list, verbatim; classified by its text like the generic fold does.
                if let text = strings.string(id) {
                    known = AnalyticsName(rawValue: text)
                    if known == nil, !otherNames.contains(id) { otherNames.append(id) }
                }
            }
            if let known {
                namesSeen |= SessionSummary.bit(known)
                if known == .onboardingCompleted { completed = true; terminal = .completed }
                if known == .userEmailCollected { emailCollected = true }
            }
        case .stateUpdated:
            if needs.answers, let element = r.elementID, let text = strings.string(element), !text.isEmpty,
                needs.answerElements.contains(text)
            {
                if answers[element].map({ $0.at < at }) ?? true {
                    answers[element] = (at, StoreEventRow(view: try full(), strings: strings).value(.value))
                }
            }
        case .openPaywall: paywall = true; terminal = .paywall
        case .close: closed = true; terminal = .closed
        case .error: terminal = .error
        default: break
        }
        if let terminal, outcomeAt < at { outcomeAt = at; outcome = terminal }
        if let tests = needs.stepTests { try noteSteps(r, at: at, tests: tests, full: full, strings: strings) }
    }

    /// Notes an event at `screen`, at `time`, with screen client id `client`.
    @inline(__always)
    private mutating func noteScreen(_ screen: Int, _ time: Int64, client: StringID) {
        let s = Int32(truncatingIfNeeded: screen)
        // The store's key order brings a session's screens in ascending runs: the last entry is the usual hit,
        // and a screen above it (while the entries are ascending) is new without a search.
        if let last = screenTimes.last {
            if last.screen == s {
                if time < last.time { screenTimes[screenTimes.count - 1].time = time }
                if client != last.client { noteClient(screenTimes.count - 1, client) }
                return
            }
            if !(screensAscending && last.screen < s), let i = screenTimes.lastIndex(where: { $0.screen == s }) {
                if time < screenTimes[i].time { screenTimes[i].time = time }
                if client != screenTimes[i].client { noteClient(i, client) }
                return
            }
            if last.screen > s { screensAscending = false }
        } else {
            screenTimes.reserveCapacity(16)
        }
        screenTimes.append((s, time, client))
    }

    /// Notes client id `client` at the screen of entry `i`, which holds another.
    @inline(never)
    private mutating func noteClient(_ i: Int, _ client: StringID) {
        guard client != RecordFormat.absent else { return }
        if screenTimes[i].client == RecordFormat.absent {
            screenTimes[i].client = client
            return
        }
        let pair = UInt64(UInt32(bitPattern: screenTimes[i].screen)) << 32 | UInt64(client)
        if !otherClients.contains(pair) { otherClients.append(pair) }
    }

    /// A session's reach times (rule 3): element `i` is the earliest event at a screen `>= i`, that is when the
    /// furthest screen index first became `>= i`. `earliest` receives `furthest + 1` times of `.max` and lowers
    /// each screen's to its earliest event there; the result shares `buffer`'s storage.
    /// `earliest` works on the buffer's memory (an array's `append` and subscript checked capacity and uniqueness per
    /// element: callgrind, a median onboarding's screen funnel spent 3 % of its instructions here).
    static func reachTimes(furthest: Int, buffer: inout [Int64], earliest: (UnsafeMutableBufferPointer<Int64>) -> Void)
        -> [Int64]
    {
        // Resized only when the count changes (consecutive sessions often reach the same screen): emptying and
        // refilling the array cost about 190 instructions per session.
        let count = furthest + 1
        if buffer.count < count {
            buffer.append(contentsOf: repeatElement(.max, count: count - buffer.count))
        } else if buffer.count > count {
            buffer.removeLast(buffer.count - count)
        }
        buffer.withUnsafeMutableBufferPointer { times in
            times.update(repeating: .max)
            earliest(times)
            var running = Int64.max
            for i in stride(from: furthest, through: 0, by: -1) {
                running = min(running, times[i])
                times[i] = running
            }
        }
        return buffer
    }

    /// The summary the same events give ``SessionSummary/add(_:)`` in `(time, seq)` order.
    func summary(name: String, strings: SnapshotStrings, needs: FoldNeeds) -> SessionSummary {
        var buffer: [Int64] = []
        return summary(name: name, strings: strings, needs: needs, reachBuffer: &buffer)
    }

    /// ``summary(name:strings:needs:)`` with the reach times built in `reachBuffer`, which the summary then shares:
    /// a caller that drops each summary before the next keeps reusing one allocation (each new array costs a
    /// generic metadata lookup in the standard library, about 500 instructions).
    func summary(
        name: String, strings: SnapshotStrings, needs: FoldNeeds,
        reachBuffer: inout [Int64]
    ) -> SessionSummary {
        let s = SessionSummary(id: name)
        summarize(into: s, strings: strings, needs: needs, reachBuffer: &reachBuffer)
        return s
    }

    /// ``summary(name:strings:needs:reachBuffer:)`` written into `s`, a summary with nothing folded
    /// (``SessionSummary/reset(id:)``).
    func summarize(into s: SessionSummary, strings: SnapshotStrings, needs: FoldNeeds, reachBuffer: inout [Int64]) {
        guard events > 0 else { return }
        if needs.profile, profileAt != .highest { s.profile = strings.string(profile) }
        if needs.placement, placementAt != .highest { s.placement = strings.string(placement) }
        if needs.variation, variationAt != .highest { s.variation = strings.string(variation) }
        if needs.onboarding, firstScreenAt != .highest { s.onboarding = strings.string(onboarding) }
        s.started = Timestamp(microseconds: first.time)
        s.ended = Timestamp(microseconds: last.time)
        s.eventCount = events
        if furthest >= 0 {
            s.furthestScreen = furthest
            s.lastScreen = lastScreen
            s.totalScreens = totalScreens
        }
        if needs.reachTimes, furthest >= 0 {
            s.reachTimes = SessionFold.reachTimes(furthest: furthest, buffer: &reachBuffer) { earliest in
                for (screen, time, _) in screenTimes
                where screen >= 0 && screen <= furthest && time < earliest[Int(screen)] {
                    earliest[Int(screen)] = time
                }
            }
            s.screenClients = .fold(screens: screenTimes, others: otherClients, names: strings)
        }
        s.completed = completed
        s.paywall = paywall
        s.closed = closed
        s.emailCollected = emailCollected
        s.outcome = outcome
        s.kindsSeen = kindsSeen
        s.namesSeen = namesSeen
        s.otherNamesSeen = otherNames.compactMap { strings.string($0) }
        if needs.stepTests != nil {
            // A session read in (time, seq) order keeps its step events in order: shared, not copied and sorted.
            s.stepEvents = stepEvents
            if !stepEvents.isSorted(by: { $0.at < $1.at }) { s.stepEvents.sort { $0.at < $1.at } }
        }
        if needs.answers {
            for (element, entry) in answers {
                if let text = strings.string(element) { s.answers[text] = entry.value }
            }
        }
    }
}

/// The fields of an event a ``SessionFold`` reads: the codec's full `RecordView` or its cheap `RecordFields`.
protocol FoldFields {
    var time: Timestamp { get }
    var profile: StringID? { get }
    var placement: StringID? { get }
    var variation: StringID? { get }
    var screenIndex: Int? { get }
    var onboarding: StringID? { get }
    var totalScreens: Int? { get }
    var screenClientID: StringID? { get }
    var kind: EventKind { get }
    var knownAnalyticsName: AnalyticsName? { get }
    var analyticsName: AnalyticsNameRef? { get }
    var elementID: StringID? { get }
}

extension RecordView: FoldFields {}
extension RecordFields: FoldFields {}

/// Folds of the sessions of a scan, by slot.
typealias FoldStorage = SlotStorage<SessionFold>

extension SessionFold {
    /// Folds `other`, a fold of other events of the same session, into this one: the result is the fold of both
    /// sets of events, whatever part each came from (every first and last is taken by its `(time, seq)` position,
    /// flags and names are united, each screen keeps its earliest time, each answer its last write, and the step
    /// events of both are kept: the summary orders them by position).
    /// - Complexity: O(screens, answers, other names and step events of `other`).
    mutating func merge(_ other: SessionFold) {
        guard other.events > 0 else { return }
        if other.first < first { first = other.first }
        if last < other.last { last = other.last }
        events += other.events
        if other.profileAt < profileAt { (profileAt, profile) = (other.profileAt, other.profile) }
        if other.placementAt < placementAt { (placementAt, placement) = (other.placementAt, other.placement) }
        if other.variationAt < variationAt { (variationAt, variation) = (other.variationAt, other.variation) }
        if other.firstScreenAt < firstScreenAt {
            (firstScreenAt, onboarding, funnelKeys) = (other.firstScreenAt, other.onboarding, other.funnelKeys)
        }
        if lastScreenAt < other.lastScreenAt { (lastScreenAt, lastScreen) = (other.lastScreenAt, other.lastScreen) }
        if let t = other.totalScreens { totalScreens = max(totalScreens ?? t, t) }
        furthest = max(furthest, other.furthest)
        for (screen, time, client) in other.screenTimes { noteScreen(Int(screen), time, client: client) }
        for pair in other.otherClients {
            noteScreen(Int(Int32(truncatingIfNeeded: pair >> 32)), .max, client: UInt32(truncatingIfNeeded: pair))
        }
        completed = completed || other.completed
        paywall = paywall || other.paywall
        closed = closed || other.closed
        emailCollected = emailCollected || other.emailCollected
        kindsSeen |= other.kindsSeen
        namesSeen |= other.namesSeen
        for id in other.otherNames where !otherNames.contains(id) { otherNames.append(id) }
        if other.outcome != nil, outcomeAt < other.outcomeAt { (outcomeAt, outcome) = (other.outcomeAt, other.outcome) }
        for (element, answer) in other.answers where answers[element].map({ $0.at < answer.at }) ?? true {
            answers[element] = answer
        }
        stepEvents += other.stepEvents
    }
}

extension Array {
    /// Whether each element is ordered before or with the next by `areInIncreasingOrder`.
    /// - Complexity: O(n).
    func isSorted(by areInIncreasingOrder: (Element, Element) -> Bool) -> Bool {
        indices.dropFirst().allSatisfy { !areInIncreasingOrder(self[$0], self[$0 - 1]) }
    }
}
