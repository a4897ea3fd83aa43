import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

/// A position in `(time, seq)` order (semantics rule 1); `seq` is unique, so the order is total.
struct OrderKey: Comparable {
    var time: Int64
    var seq: UInt64

    static let lowest = OrderKey(time: .min, seq: 0)
    static let highest = OrderKey(time: .max, seq: .max)

    @inline(__always)
    static func < (a: OrderKey, b: OrderKey) -> Bool { a.time != b.time ? a.time < b.time : a.seq < b.seq }
}

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
    /// When each screen index was first reached (the screen funnel).
    var reachTimes = false
    /// The session's last event and last screen (`ended`, `duration`, `last_screen`, or a listing): a lean fold
    /// that need not keep them skips two comparisons per event, and its summaries leave them at their initial values.
    var lasts = true
    /// Breakdown columns of a screen funnel, evaluated on the session's first event with a screen index.
    var funnelBy: [BoundColumn] = []
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

    init() {}

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
            if f.steps.isEmpty {
                funnelBy = f.by
            } else if !query.needsSessionRows {
                // The breakdown of a custom funnel is read on its step events, not on the first screen event.
                stepTests = StepTests(FunnelMatcher(funnel: f, now: now))
            }
        case nil: name = true  // listed rows are ordered by (started, session)
        }
        // Lean: a reduction (a listing shows every field) that is not a custom funnel (it matches each session's
        // events) nor a screen funnel broken down by event fields, over bounds that read no other session field.
        let isCustomFunnel = if case .funnel(let f) = query.reduction { !f.steps.isEmpty } else { false }
        func readsMore(_ outcomes: Bool) -> Bool {
            bounds.contains { bound in
                bound.contains { leaf in
                    switch leaf {
                    case .session(let field): !(SessionFold.isLean(field) || outcomes && SessionFold.isLeanWithOutcomes(field))
                    // Names outside the known list are kept as strings, by full folds only.
                    case .did(let x): !(outcomes && (EventKind(rawValue: x) != nil || AnalyticsName(rawValue: x) != nil))
                    case .event, .answer: true
                    default: false
                    }
                }
            }
        }
        lean = query.reduction != nil && !isCustomFunnel && funnelBy.isEmpty && !readsMore(true)
        leanOutcomes = lean && readsMore(false)
        let lastFields: [Bound] = [.session(.ended), .session(.duration), .session(.lastScreen)]
        lasts = query.reduction == nil || bounds.contains { $0.contains(where: lastFields.contains) }
        for b in bounds {
            if b.contains(where: { $0 == .session(.session) }) { name = true }
            if b.contains(where: { $0 == .session(.profile) }) { profile = true }
            if b.contains(where: { $0 == .session(.placement) }) { placement = true }
            if b.contains(where: { $0 == .session(.variation) }) { variation = true }
            if b.contains(where: { $0 == .session(.onboarding) }) { onboarding = true }
            if b.contains(where: { if case .answer = $0 { true } else { false } }) { answers = true }
        }
    }
}

extension Bound {
    /// Whether the expression or any part of it satisfies `test`.
    func contains(where test: (Bound) -> Bool) -> Bool {
        if test(self) { return true }
        switch self {
        case .compare(_, let a, let b), .and(let a, let b), .or(let a, let b), .arithmetic(_, let a, let b):
            return a.contains(where: test) || b.contains(where: test)
        case .not(let a), .negate(let a): return a.contains(where: test)
        case .member(let a, let items, _): return a.contains(where: test) || items.contains { $0.contains(where: test) }
        default: return false
        }
    }
}

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
    /// The earliest time of each screen index seen, in arrival order (for reach times).
    var screenTimes: [(screen: Int32, time: Int64)] = []
    /// Whether `screenTimes` is in ascending screen order (as the store's key order appends them).
    var screensAscending = true
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
        case .session, .onboarding, .started, .ended, .duration, .events, .furthestScreen, .lastScreen, .totalScreens: true
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
    mutating func add(_ view: EventView, strings: StringCache, needs: FoldNeeds) {
        // A full view already holds every field: `full` cannot fail.
        add(view.record, seq: view.seq, full: { view }, strings: strings, needs: needs)
    }

    /// Folds one event from the fields it reads; `full` decodes the whole event, which only answers and a
    /// screen funnel's breakdown columns need (for state updates, and for a session's first event with a
    /// screen index).
    @inline(__always)
    mutating func add<Fields: FoldFields, E: Error>(_ r: Fields, seq: UInt64, full: () throws(E) -> EventView,
                                                   strings: StringCache, needs: FoldNeeds) throws(E) {
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
                    funnelKeys = FunnelMatcher.values(of: needs.funnelBy, on: StoreEventRow(view: try full(), strings: strings),
                                                      now: needs.now)
                }
            }
            if lastScreenAt < at { lastScreenAt = at; lastScreen = screen }
            if let t = r.totalScreens { totalScreens = max(totalScreens ?? t, t) }
            if screen > furthest { furthest = screen }
            if needs.reachTimes { noteScreen(screen, at.time) }
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
            if needs.answers, let element = r.elementID, let text = strings.string(element), !text.isEmpty {
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

    @inline(__always)
    private mutating func noteScreen(_ screen: Int, _ time: Int64) {
        let s = Int32(truncatingIfNeeded: screen)
        // The store's key order brings a session's screens in ascending runs: the last entry is the usual hit,
        // and a screen above it (while the entries are ascending) is new without a search.
        if let last = screenTimes.last {
            if last.screen == s {
                if time < last.time { screenTimes[screenTimes.count - 1].time = time }
                return
            }
            if !(screensAscending && last.screen < s), let i = screenTimes.lastIndex(where: { $0.screen == s }) {
                if time < screenTimes[i].time { screenTimes[i].time = time }
                return
            }
            if last.screen > s { screensAscending = false }
        } else {
            screenTimes.reserveCapacity(16)
        }
        screenTimes.append((s, time))
    }

    /// A session's reach times (rule 3): element `i` is the earliest event at a screen `>= i`, that is when the
    /// furthest screen index first became `>= i`. `earliest` receives `furthest + 1` times of `.max` and lowers
    /// each screen's to its earliest event there; the result shares `buffer`'s storage.
    /// `earliest` works on the buffer's memory (an array's `append` and subscript checked capacity and uniqueness per
    /// element: callgrind, a median onboarding's screen funnel spent 3 % of its instructions here).
    static func reachTimes(furthest: Int, buffer: inout [Int64], earliest: (UnsafeMutableBufferPointer<Int64>) -> Void) -> [Int64] {
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
    func summary(name: String, strings: StringCache, needs: FoldNeeds) -> SessionSummary {
        var buffer: [Int64] = []
        return summary(name: name, strings: strings, needs: needs, reachBuffer: &buffer)
    }

    /// ``summary(name:strings:needs:)`` with the reach times built in `reachBuffer`, which the summary then shares:
    /// a caller that drops each summary before the next keeps reusing one allocation (each new array costs a
    /// generic metadata lookup in the standard library, about 500 instructions).
    func summary(name: String, strings: StringCache, needs: FoldNeeds, reachBuffer: inout [Int64]) -> SessionSummary {
        let s = SessionSummary(id: name)
        guard events > 0 else { return s }
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
                for (screen, time) in screenTimes where screen >= 0 && screen <= furthest && time < earliest[Int(screen)] {
                    earliest[Int(screen)] = time
                }
            }
        }
        s.completed = completed
        s.paywall = paywall
        s.closed = closed
        s.emailCollected = emailCollected
        s.outcome = outcome
        s.kindsSeen = kindsSeen
        s.namesSeen = namesSeen
        s.otherNamesSeen = otherNames.compactMap { strings.string($0) }
        if needs.stepTests != nil { s.stepEvents = stepEvents.sorted { $0.at < $1.at } }
        if needs.answers {
            for (element, entry) in answers {
                if let text = strings.string(element) { s.answers[text] = entry.value }
            }
        }
        return s
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
    var kind: EventKind { get }
    var knownAnalyticsName: AnalyticsName? { get }
    var analyticsName: AnalyticsNameRef? { get }
    var elementID: StringID? { get }
}

extension RecordView: FoldFields {}
extension RecordFields: FoldFields {}

/// Session id → slot, open addressing over a power-of-two table: the whole-store fold looks one up per event,
/// where a `Dictionary` would hash with SipHash. Each entry packs the key (high 32 bits) and its slot (low 32
/// bits) in one word, so a lookup costs one memory access: the table is read at random, once per event, and
/// is larger than the first-level cache for a scope of thousands of sessions. `UInt64.max` marks an empty
/// entry (a slot never has its top bit set), so every 32-bit id is a valid key.
///
/// A key's probe starts at `((key − base) × multiplier) >> 32`, masked to the table: with base 0 and a
/// Fibonacci multiplier, a hash that scatters keys; for a table of known ids (``init(ordered:)``), base and
/// multiplier that spread the ids' range over the table in order.
struct SessionSlots {
    private var entries: [UInt64]
    private var mask: Int
    private(set) var count = 0
    private let base: UInt32
    private let multiplier: UInt64
    private static let empty = UInt64.max
    private static let fibonacci: UInt64 = 0x9E37_79B9_7F4A_7C15

    init(capacity: Int) {
        self.init(size: SessionSlots.size(for: capacity), base: 0, multiplier: SessionSlots.fibonacci)
    }

    private init(size: Int, base: UInt32, multiplier: UInt64) {
        entries = SessionSlots.emptyEntries(size)
        mask = size - 1
        self.base = base
        self.multiplier = multiplier
    }

    /// `size` empty entries, their pages mapped in one call rather than a fault each (``prefault(_:byteCount:)``).
    private static func emptyEntries(_ size: Int) -> [UInt64] {
        [UInt64](unsafeUninitializedCapacity: size) { buffer, count in
            prefault(UnsafeMutableRawPointer(buffer.baseAddress!), byteCount: size * MemoryLayout<UInt64>.stride)
            buffer.initialize(repeating: SessionSlots.empty)
            count = size
        }
    }

    private static func size(for capacity: Int) -> Int {
        var size = 1024
        while size < capacity * 2 { size <<= 1 }
        return size
    }

    /// A table of `ids` (distinct), each with its index in `ids` as its slot, placed in the order of the ids:
    /// keys near each other in value sit near each other in the table.
    ///
    /// A scope's session ids are dense in first-seen order and its scan meets the sessions of a screen in time
    /// order, so its lookups sweep the table instead of landing at random: the hardware's prefetcher keeps
    /// the table in cache while the scan's blocks stream past it (the scattered table's probe was a sixth of the
    /// scan loop's time in `perf`, a median onboarding at 1 M sessions). Ids crowded into a part of their range
    /// make long runs of occupied entries, which every lookup of an absent id landing in one walks to its end
    /// (a scope scan looks up sessions outside the scope too: a review measured 190 000 probes per miss for 600 k
    /// ids packed at one end of their range). So the table is built with the scattering hash instead when the
    /// ids are displaced by more than two entries on average from where their value puts them, or when any run of
    /// occupied entries is longer than ``longestOrderedRun``.
    /// - Complexity: O(ids + table size).
    init(ordered ids: [UInt32]) {
        let size = SessionSlots.size(for: ids.count)
        guard let low = ids.min(), let high = ids.max() else {
            self.init(capacity: 0)
            return
        }
        // Spread the range [low, high] over the table: (id − low) × multiplier < size × 2³² (so the multiplier is
        // below 2⁶³, never the Fibonacci one).
        let span = UInt64(high - low) + 1
        self.init(size: size, base: low, multiplier: max((UInt64(size) << 32) / span, 1))
        var displacement = 0
        for (slot, id) in ids.enumerated() {
            displacement += insert(id, slot: slot)
            if displacement > 2 * ids.count + 64 { break }
        }
        if displacement > 2 * ids.count + 64 || longestRun > SessionSlots.longestOrderedRun {
            self = SessionSlots(capacity: ids.count)
            for (slot, id) in ids.enumerated() { _ = insert(id, slot: slot) }
        }
    }

    /// The longest run of occupied entries an ordered table may have (a scattering hash at half load has runs
    /// of a few entries; an absent key's lookup walks at most one run).
    static let longestOrderedRun = 32

    /// The longest run of consecutive occupied entries, the table taken as a ring.
    private var longestRun: Int {
        // Once around from an empty entry, so that a run through the end continues at the start (a table full of
        // keys has one run).
        guard let start = entries.firstIndex(of: SessionSlots.empty) else { return entries.count }
        var longest = 0, run = 0
        for k in 1...entries.count {
            if entries[(start + k) & mask] == SessionSlots.empty {
                run = 0
            } else {
                run += 1
                longest = max(longest, run)
            }
        }
        return longest
    }

    /// Places `key` with `slot` (a key not in the table; no growth): the number of entries it was moved past.
    private mutating func insert(_ key: UInt32, slot: Int) -> Int {
        var i = start(key)
        var moved = 0
        while entries[i] != SessionSlots.empty {
            i = (i + 1) & mask
            moved += 1
        }
        entries[i] = UInt64(key) << 32 | UInt64(UInt32(truncatingIfNeeded: slot) & 0x7FFF_FFFF)
        count += 1
        return moved
    }

    /// Whether keys are placed in the order of their values (``init(ordered:)`` kept its placement).
    var placesInOrder: Bool { multiplier != SessionSlots.fibonacci }

    @inline(__always)
    private func start(_ key: UInt32) -> Int {
        Int(truncatingIfNeeded: (UInt64(key &- base) &* multiplier) >> 32) & mask
    }

    /// The slot of `key`, inserting it with slot `count` (the next one) when new.
    @inline(__always)
    mutating func slot(_ key: UInt32) -> (slot: Int, inserted: Bool) {
        var i = start(key)
        while true {
            let e = entries[i]
            if e == SessionSlots.empty { break }
            if UInt32(truncatingIfNeeded: e >> 32) == key { return (Int(UInt32(truncatingIfNeeded: e)), false) }
            i = (i + 1) & mask
        }
        // 31 bits of slot: 2³¹ sessions would take hundreds of GiB of folds before they got here.
        entries[i] = UInt64(key) << 32 | UInt64(UInt32(truncatingIfNeeded: count) & 0x7FFF_FFFF)
        count += 1
        if count * 2 > entries.count { grow() }
        return (count - 1, true)
    }

    /// The slot of `key`, or nil when it was never inserted.
    @inline(__always)
    func existingSlot(_ key: UInt32) -> Int? {
        var i = start(key)
        while true {
            let e = entries[i]
            if e == SessionSlots.empty { return nil }
            if UInt32(truncatingIfNeeded: e >> 32) == key { return Int(UInt32(truncatingIfNeeded: e)) }
            i = (i + 1) & mask
        }
    }

    private mutating func grow() {
        let old = entries
        entries = SessionSlots.emptyEntries(old.count * 2)
        mask = entries.count - 1
        for e in old where e != SessionSlots.empty {
            var i = start(UInt32(truncatingIfNeeded: e >> 32))
            while entries[i] != SessionSlots.empty { i = (i + 1) & mask }
            entries[i] = e
        }
    }
}

/// Values by slot in one growable allocation, mutated in place through ``base`` (an `Array` element reached
/// from inside a scan's closure is copied out and back, and checked for exclusive access, on every event).
///
/// The allocation starts on a 64-byte cache line, so a value whose stride is a multiple of 64 (``LeanFold``) keeps
/// each of its lines' fields on one line (a large `malloc` block starts 16 bytes into a page).
final class SlotStorage<Element> {
    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<Element>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = SlotStorage.allocate(self.capacity)
    }

    private static func allocate(_ capacity: Int) -> UnsafeMutablePointer<Element> {
        UnsafeMutableRawPointer.allocate(byteCount: capacity * MemoryLayout<Element>.stride,
                                         alignment: max(64, MemoryLayout<Element>.alignment))
            .bindMemory(to: Element.self, capacity: capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    /// Appends `value` and returns its slot.
    func append(_ value: Element) -> Int {
        if count == capacity { grow(to: capacity * 2) }
        (base + count).initialize(to: value)
        count += 1
        return count - 1
    }

    /// Appends `n` copies of `value` (one growth, and no copy call per element for a large value).
    func append(_ value: Element, count n: Int) {
        guard n > 0 else { return }
        if count + n > capacity { grow(to: max(capacity * 2, count + n)) }
        prefault(UnsafeMutableRawPointer(base + count), byteCount: n * MemoryLayout<Element>.stride)
        (base + count).initialize(repeating: value, count: n)
        count += n
    }

    private func grow(to newCapacity: Int) {
        let bigger = SlotStorage.allocate(newCapacity)
        bigger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = bigger
        capacity = newCapacity
    }
}

/// Folds of the sessions of a scan, by slot.
typealias FoldStorage = SlotStorage<SessionFold>
