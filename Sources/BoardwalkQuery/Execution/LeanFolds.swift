import BoardwalkCodec
import BoardwalkModel

/// What a lean fold (``FoldNeeds/lean``) keeps of one session: what each event's time, seq, screen, onboarding
/// and total screens say about it (the session fields ``SessionFold/isLean(_:)`` lists), and the newest entry of
/// the session's chain of screen times, and, when the query reads them, the kinds and names it saw and its
/// outcome, in 128 bytes (a ``SessionFold`` takes 256, and holds its screen times in an array of its own).
///
/// A scan visits the events of a scope in key order, `(onboarding, screen, time, seq)`, so consecutive events
/// belong to unrelated sessions: every event is a random access to its session's state. Keeping that state
/// small is what keeps a scope of thousands of sessions in the core's cache (measured with callgrind's cache
/// simulation of a 2 MiB last level, a median onboarding's funnel at 1 M sessions: 1.7 misses per event in the
/// fold with ``SessionFold``s, 0.5 with these).
///
/// **Two cache lines, the first one hot.** The folds are stored 64-byte aligned (``SlotStorage``) and the fields
/// are declared in the order they are laid out: what every event of a scan of whole onboardings touches when the
/// query needs no lasts (first, events, total screens, onboarding, furthest screen, the flags; a screen funnel of
/// one onboarding, with its screen times in rows) lies in the first 64 bytes; what only some queries touch (the
/// onboarding's first event when a session may span onboardings, the last screen's position, the chain's head,
/// the outcome's position) in the second. Such a scan of 8.5 k sessions then reads one line per event from 531 KiB
/// of folds instead of two or three of 136-byte folds that straddled lines (cachegrind's simulation of this
/// machine's 1 MiB L2, the median onboarding's funnel: 142 k misses in the folds with straddling lines).
/// `LeanFoldsTests` checks the layout.
struct LeanFold {
    // The first cache line (64 bytes).
    var first = OrderKey.highest
    var last = OrderKey.lowest
    var events = 0
    /// The largest `total_screens` seen; `Int.min` when none.
    var totalScreens = Int.min
    var onboarding: StringID = 0
    var furthest: Int32 = -1
    var lastScreen: Int32 = -1
    /// ``excluded`` and ``ascending``.
    var flags: UInt8 = LeanFold.ascendingFlag
    /// With outcomes (``FoldNeeds/leanOutcomes``): kinds and known analytics names seen, as
    /// ``SessionSummary/kindsSeen`` and ``SessionSummary/namesSeen`` hold them, and the last terminal event.
    var kindsSeen: UInt8 = 0
    var namesSeen: UInt8 = 0
    var outcome: Exit?
    // The second cache line.
    /// The first event with a screen index: the session's onboarding.
    var firstScreenAt = OrderKey.highest
    var lastScreenAt = OrderKey.lowest
    var outcomeAt = OrderKey.lowest
    /// The newest screen of the session's screen times and the earliest time seen at it (kept here rather than
    /// in the pool: the next event of the session at the same screen, the usual case, touches no other memory).
    var headTime: Int64 = .max
    var headScreen: Int32 = -1
    /// The pool index of the entry before the head, `-1` for none.
    var headPrevious: Int32 = -1

    static let excludedFlag: UInt8 = 1
    static let ascendingFlag: UInt8 = 2

    /// A session of the scope that the scan skips (it is read through the session index instead).
    var excluded: Bool {
        @inline(__always) get { flags & LeanFold.excludedFlag != 0 }
        @inline(__always) set { flags = newValue ? flags | LeanFold.excludedFlag : flags & ~LeanFold.excludedFlag }
    }

    /// Whether the screens of the chain ascend from oldest to newest (the key order delivers them so within one
    /// onboarding; a session in several onboardings may go back).
    var ascending: Bool {
        @inline(__always) get { flags & LeanFold.ascendingFlag != 0 }
        @inline(__always) set { flags = newValue ? flags | LeanFold.ascendingFlag : flags & ~LeanFold.ascendingFlag }
    }
}

/// The sessions of a lean fold, by slot, with their screen times in one shared pool.
///
/// A session's screen times form a chain, newest first: the head lives in its ``LeanFold``, older entries in
/// the pool, each linking to the one before. New entries are appended to the pool, so the pool is written
/// sequentially whatever the order of the sessions. Reach times are only kept when the query needs them
/// (a screen funnel).
///
/// Memory: 128 bytes per session plus 16 bytes per (session, screen) pair beyond each session's newest; with rows,
/// 12 bytes per (session, row screen) for the earliest time and the screen client id. A screen funnel also keeps a
/// session's (screen, client id) pairs past the rows, and any second client id at a screen, 8 bytes each.
/// The pool's links are 32-bit: a fold with more than 2³¹ − 1 such pairs (several billion events) throws
/// rather than trap.
///
/// **Rows of screen times.** When the scope's screens are few (``init(capacity:events:reachTimes:outcomes:rowScreens:)``),
/// each session's earliest times at screens `0..<rowScreens` are kept in rows instead, and only screens past them
/// go to the chains: a session's summary reads its times in place instead of walking a chain scattered over the
/// pool (`perf`, a median onboarding's screen funnel: the chains' walk was 3 % of the query, and missed the cache at
/// every entry). The rows are laid out by screen (one row per screen, its sessions in slot order): a scan reads a
/// group (onboarding, screen) at a time and meets its sessions in time order, which is about slot order, so it
/// sweeps one screen's row, 8 bytes per session (68 KiB for 8.5 k sessions, within the cache), where rows by session
/// put each session's time at a screen on a cache line of its own (1.3 MiB for 19 screens; perf put the load at a
/// tenth of the scan loop).
final class LeanFolds {
    /// One older screen time of a chain.
    struct ScreenTime {
        var time: Int64
        var screen: Int32
        var previous: Int32
    }

    private let folds: SlotStorage<LeanFold>
    /// The folds, by slot.
    @inline(__always) var base: UnsafeMutablePointer<LeanFold> { folds.base }
    /// The number of sessions.
    var count: Int { folds.count }
    @exclusivity(unchecked) private var pool: UnsafeMutablePointer<ScreenTime>
    @exclusivity(unchecked) private var poolCapacity: Int
    @exclusivity(unchecked) private var poolCount = 0
    let reachTimes: Bool
    /// Whether the folds keep kinds, names and outcomes (``FoldNeeds/leanOutcomes``).
    let outcomes: Bool
    /// Whether the folds keep each session's last event and last screen (``FoldNeeds/lasts``).
    let lasts: Bool
    /// Whether every event with a screen that a fold takes is in one onboarding (a scan of whole onboardings folds
    /// only sessions whose positioned events lie in one of them): the session's onboarding is then any such event's,
    /// and the earliest of them need not be tracked.
    let oneOnboarding: Bool
    /// Screens `0..<rowScreens` have their times in ``rows`` (0: none do).
    let rowScreens: Int
    /// The earliest times at screens `0..<rowScreens` (`Int64.max`: none yet), by screen, then slot: screen `s`'s
    /// row is `rows[s * rowCapacity ..< (s + 1) * rowCapacity]`.
    @exclusivity(unchecked) private var rows: UnsafeMutablePointer<Int64>
    @exclusivity(unchecked) private var rowCapacity: Int
    /// With reach times, the screen client id of each session's first event folded at screens `0..<rowScreens`
    /// (``RecordFormat/absent``: none yet), laid out as ``rows``, in the same allocation, after them: one block of
    /// the size the rows alone took 1.5 times, rather than a second block (a second block of megabytes made `malloc`
    /// map fresh pages for each query of a process, which the kernel zeroed: a tenth of a whole-store funnel).
    @exclusivity(unchecked) private var clientRows: UnsafeMutablePointer<UInt32>
    /// With reach times, the other (screen index, client id) pairs of each session, by slot, as
    /// ``SessionSummary/screenClients`` holds them: every pair at a screen past the rows, and a second client id at a
    /// screen of the rows (rare: a screen index names one screen of an onboarding).
    @exclusivity(unchecked) private var otherClients: [Int: [UInt64]] = [:]
    /// The last pair ``noteOtherClient(slot:_:_:)`` saw, as `(slot, pair)`: a session's next events at a screen past
    /// the rows skip the lookup.
    @exclusivity(unchecked) private var lastOtherClient: (slot: Int, pair: UInt64) = (-1, 0)
    /// The strings of the last summary's snapshot, which name the client ids.
    @exclusivity(unchecked) private(set) var clientNames: SnapshotStrings?

    /// - Parameters:
    ///   - capacity: the number of sessions expected (the storage grows past it).
    ///   - events: the number of events the scan may fold, a bound on the screen times it keeps. The pool is
    ///     reserved for that many (up to 2²⁶ entries, 1 GiB, then it grows): memory is only touched, and
    ///     counted, as the pool fills, while growing it would copy it into fresh pages (measured: a fifth of a
    ///     median onboarding's page faults).
    ///   - reachTimes: whether to keep each session's screen times (``FoldNeeds/reachTimes``).
    ///   - outcomes: whether to keep kinds, names and outcomes (``FoldNeeds/leanOutcomes``).
    ///   - lasts: whether to keep each session's last event and last screen (``FoldNeeds/lasts``); without, the
    ///     summaries' `ended` and `lastScreen` keep their initial values.
    ///   - oneOnboarding: whether each session's events with a screen are all in one onboarding (``oneOnboarding``).
    ///   - rowScreens: with `reachTimes`, the screens whose times are kept in rows (see the type's discussion); 0
    ///     for none. Rows take 8 bytes per screen and session, whatever the session reached.
    init(
        capacity: Int, events: Int, reachTimes: Bool, outcomes: Bool = false, lasts: Bool = true,
        oneOnboarding: Bool = false,
        rowScreens: Int = 0
    ) {
        folds = SlotStorage(capacity: capacity)
        self.reachTimes = reachTimes
        self.outcomes = outcomes
        self.lasts = lasts
        self.oneOnboarding = oneOnboarding
        poolCapacity = reachTimes ? min(max(events, 256), 1 << 26) : 0
        pool = .allocate(capacity: max(poolCapacity, 1))
        self.rowScreens = reachTimes ? max(rowScreens, 0) : 0
        rowCapacity = self.rowScreens > 0 ? max(capacity, 64) : 0
        (rows, clientRows) = LeanFolds.allocateRows(max(rowCapacity * self.rowScreens, 1))
    }

    /// One block for `cells` times and `cells` client ids.
    private static func allocateRows(_ cells: Int) -> (UnsafeMutablePointer<Int64>, UnsafeMutablePointer<UInt32>) {
        let block = UnsafeMutableRawPointer.allocate(
            byteCount: cells * (MemoryLayout<Int64>.stride + MemoryLayout<UInt32>.stride),
            alignment: MemoryLayout<Int64>.alignment)
        return (
            block.bindMemory(to: Int64.self, capacity: cells),
            (block + cells * MemoryLayout<Int64>.stride).bindMemory(to: UInt32.self, capacity: cells)
        )
    }

    /// How many screens a fold of `sessions` sessions and `events` events over onboardings of up to `screens`
    /// screens (their largest `total_screens`) keeps in rows: all of them when there are at most 64 and the rows
    /// take no more entries than the events (the pool is reserved for as many); else none.
    static func rowScreens(screens: Int, sessions: Int, events: Int) -> Int {
        guard screens > 0, screens <= 64, sessions <= max(events, 4096) / screens else { return 0 }
        return screens
    }

    deinit {
        pool.deallocate()  // trivial types: nothing to deinitialize
        rows.deallocate()  // the block of both
    }

    /// Appends an empty fold and returns its slot.
    func append() -> Int {
        let slot = folds.count
        append(count: 1)
        return slot
    }

    /// Appends `n` empty folds (slots `count..<count + n`).
    func append(count n: Int) {
        guard n > 0 else { return }
        let first = folds.count
        folds.append(LeanFold(), count: n)
        if rowScreens > 0 {
            if first + n > rowCapacity {
                let newCapacity = max(rowCapacity * 2, first + n)
                let (bigger, biggerClients) = LeanFolds.allocateRows(newCapacity * rowScreens)
                for s in 0..<rowScreens {
                    (bigger + s * newCapacity).moveInitialize(from: rows + s * rowCapacity, count: first)
                    (biggerClients + s * newCapacity).moveInitialize(from: clientRows + s * rowCapacity, count: first)
                }
                rows.deallocate()
                (rows, clientRows) = (bigger, biggerClients)
                rowCapacity = newCapacity
            }
            // The new entries are a stretch of each screen's row: populated together when they are many (one
            // call over the span from the first row's to the last row's; `prefault` takes whole pages of ranges
            // of 64 KiB or more), as they were when a session's times were a row of its own.
            if n * rowScreens * MemoryLayout<Int64>.stride >= 64 << 10 {
                let start = rows + first, end = rows + (rowScreens - 1) * rowCapacity + first + n
                prefault(UnsafeMutableRawPointer(start), byteCount: (end - start) * MemoryLayout<Int64>.stride)
                let clients = clientRows + first, clientsEnd = clientRows + (rowScreens - 1) * rowCapacity + first + n
                prefault(
                    UnsafeMutableRawPointer(clients), byteCount: (clientsEnd - clients) * MemoryLayout<UInt32>.stride)
            }
            if n == 1 {
                // One session at a time (a whole-store scan meets its sessions so): two stores per screen, not a
                // `memset` call for each client id.
                for s in 0..<rowScreens {
                    (rows + s * rowCapacity + first).initialize(to: .max)
                    (clientRows + s * rowCapacity + first).initialize(to: RecordFormat.absent)
                }
            } else {
                for s in 0..<rowScreens {
                    (rows + s * rowCapacity + first).initialize(repeating: .max, count: n)
                    (clientRows + s * rowCapacity + first).initialize(repeating: RecordFormat.absent, count: n)
                }
            }
        }
    }

    /// Folds one event's time, seq, screen, onboarding and total screens into the session at `slot`, as
    /// ``SessionFold/add(_:seq:full:strings:needs:)`` folds those fields: in any order, each "first" and "last"
    /// kept with its `(time, seq)` position.
    ///
    /// A scan loop passes ``settings``, read once before the loop: read from the instance, each setting was loaded
    /// again after every store to a fold (the compiler cannot tell the folds' memory from the instance's).
    @inline(__always)
    func add(slot: Int, _ fields: RecordFields, seq: UInt64, _ settings: Settings) throws(QueryError) {
        try add(
            slot: slot, time: fields.timeMicroseconds, seq: seq, screen: fields.screenIndex,
            onboarding: fields.onboarding, totalScreens: fields.totalScreens, client: fields.screenClientRef, settings)
    }

    /// What ``add(slot:_:seq:_:)`` and ``addFollowing(slot:_:seq:_:)`` do differently by the instance's settings.
    struct Settings {
        let lasts: Bool
        let oneOnboarding: Bool
        let reachTimes: Bool
        let rowScreens: Int
    }

    /// This instance's settings, for a scan loop to read once.
    var settings: Settings {
        Settings(lasts: lasts, oneOnboarding: oneOnboarding, reachTimes: reachTimes, rowScreens: rowScreens)
    }

    /// ``add(slot:_:seq:_:)`` from the fields themselves.
    @inline(__always)
    func add(
        slot: Int, time: Int64, seq: UInt64, screen: Int?, onboarding: StringID?, totalScreens: Int?,
        client: StringID = RecordFormat.absent, _ settings: Settings? = nil
    ) throws(QueryError) {
        let settings = settings ?? self.settings
        let lasts = settings.lasts, oneOnboarding = settings.oneOnboarding, reachTimes = settings.reachTimes
        let rowScreens = settings.rowScreens, rowCapacity = self.rowCapacity
        let f = base + slot
        let at = OrderKey(time: time, seq: seq)
        if at < f.pointee.first { f.pointee.first = at }
        if lasts, f.pointee.last < at { f.pointee.last = at }
        f.pointee.events &+= 1
        guard let screen else { return }
        if oneOnboarding {
            f.pointee.onboarding = onboarding ?? 0
        } else if at < f.pointee.firstScreenAt {
            f.pointee.firstScreenAt = at
            f.pointee.onboarding = onboarding ?? 0
        }
        let s = Int32(truncatingIfNeeded: screen)
        if lasts, f.pointee.lastScreenAt < at { f.pointee.lastScreenAt = at; f.pointee.lastScreen = s }
        if let totalScreens, totalScreens > f.pointee.totalScreens { f.pointee.totalScreens = totalScreens }
        if s > f.pointee.furthest { f.pointee.furthest = s }
        if reachTimes {
            if s < rowScreens {
                let cell = Int(s) &* rowCapacity &+ slot
                let entry = rows + cell
                if time < entry.pointee { entry.pointee = time }
                noteClient(cell: cell, slot: slot, s, client)
            } else {
                try noteScreen(f, s, time)
                noteOtherClient(slot: slot, s, client)
            }
        }
    }

    /// Notes that the session at `slot` has an event with screen client id `client` at row screen `s` (its cell
    /// in ``clientRows``).
    @inline(__always)
    private func noteClient(cell: Int, slot: Int, _ s: Int32, _ client: StringID) {
        if client == RecordFormat.absent { return }
        let entry = clientRows + cell
        if entry.pointee == client { return }
        if entry.pointee == RecordFormat.absent {
            entry.pointee = client
        } else {
            noteOtherClient(slot: slot, s, client)
        }
    }

    /// Notes that the session at `slot` has an event with screen client id `client` at screen `s`, in
    /// ``otherClients``.
    @inline(never)
    private func noteOtherClient(slot: Int, _ s: Int32, _ client: StringID) {
        guard client != RecordFormat.absent else { return }
        let pair = UInt64(UInt32(bitPattern: s)) << 32 | UInt64(client)
        if lastOtherClient == (slot, pair) { return }
        lastOtherClient = (slot, pair)
        if otherClients[slot]?.contains(pair) == true { return }
        otherClients[slot, default: []].append(pair)
    }

    /// ``add(slot:_:seq:_:)`` for an event that comes after another event of the same session already folded from
    /// the same group (onboarding, screen), later in (time, seq) order: in a scan's run, the next event of the session
    /// just folded. That event already holds the first event, the onboarding, the furthest screen and the earliest
    /// time at this screen against this one, so only the count, the lasts and the total screens can change.
    ///
    /// `previousClient` is the screen client id of the event before it (the scan's previous event): the usual run of
    /// events with one client id then touches no client memory.
    @inline(__always)
    func addFollowing(
        slot: Int, _ fields: RecordFields, seq: UInt64, previousClient: StringID, _ settings: Settings
    ) {
        addFollowing(
            slot: slot, time: fields.timeMicroseconds, seq: seq, screen: fields.screenIndex,
            totalScreens: fields.totalScreens,
            client: fields.screenClientRef == previousClient ? RecordFormat.absent : fields.screenClientRef, settings)
    }

    /// ``addFollowing(slot:_:seq:_:)`` from the fields themselves.
    @inline(__always)
    func addFollowing(
        slot: Int, time: Int64, seq: UInt64, screen: Int?, totalScreens: Int?, client: StringID = RecordFormat.absent,
        _ settings: Settings? = nil
    ) {
        let settings = settings ?? self.settings
        let f = base + slot
        f.pointee.events &+= 1
        if settings.reachTimes, let screen, client != RecordFormat.absent {
            // The same screen as the event before (one group), which may name another client id.
            let s = Int32(truncatingIfNeeded: screen)
            if s < settings.rowScreens {
                noteClient(cell: Int(s) &* rowCapacity &+ slot, slot: slot, s, client)
            } else {
                noteOtherClient(slot: slot, s, client)
            }
        }
        if settings.lasts {
            let at = OrderKey(time: time, seq: seq)
            if f.pointee.last < at { f.pointee.last = at }
            if let screen, f.pointee.lastScreenAt < at {
                f.pointee.lastScreenAt = at
                f.pointee.lastScreen = Int32(truncatingIfNeeded: screen)
            }
        }
        if screen != nil, let totalScreens, totalScreens > f.pointee.totalScreens {
            f.pointee.totalScreens = totalScreens
        }
    }

    /// Keeps the earliest time of each screen of the session at `f` (in its chain). Not inlined: with rows, a
    /// scan calls it only for screens past them, and inlined it made `add` too large to be inlined into the scan
    /// loop (callgrind: +8 % instructions).
    @inline(never)
    private func noteScreen(_ f: UnsafeMutablePointer<LeanFold>, _ s: Int32, _ time: Int64) throws(QueryError) {
        let head = f.pointee.headScreen
        if head == s {
            if time < f.pointee.headTime { f.pointee.headTime = time }
            return
        }
        if head >= 0, !(f.pointee.ascending && head < s) {
            // Not the newest screen, nor above it in an ascending chain: it may be an older entry.
            var i = f.pointee.headPrevious
            while i >= 0 {
                if pool[Int(i)].screen == s {
                    if time < pool[Int(i)].time { pool[Int(i)].time = time }
                    return
                }
                i = pool[Int(i)].previous
            }
            if head > s { f.pointee.ascending = false }
        }
        if head >= 0 {
            // The head moves to the pool; the new screen becomes the head.
            if poolCount == poolCapacity { try growPool() }
            pool[poolCount] = ScreenTime(time: f.pointee.headTime, screen: head, previous: f.pointee.headPrevious)
            f.pointee.headPrevious = Int32(truncatingIfNeeded: poolCount)
            poolCount += 1
        }
        f.pointee.headScreen = s
        f.pointee.headTime = time
    }

    private func growPool() throws(QueryError) {
        guard poolCapacity < Int(Int32.max) else {
            throw QueryError(
                .source,
                "the query's sessions reached more than \(Int32.max) (session, screen) pairs, more than one fold holds")
        }
        let bigger = min(poolCapacity * 2, Int(Int32.max))
        let grown = UnsafeMutablePointer<ScreenTime>.allocate(capacity: bigger)
        grown.moveInitialize(from: pool, count: poolCount)
        pool.deallocate()
        pool = grown
        poolCapacity = bigger
    }

    /// Folds the kind of the event at `at`, its analytics name and whether it ends the session (rule 8) into the
    /// session at `slot`, as ``SessionFold/add(_:seq:full:strings:needs:)`` does (an analytics name outside the
    /// known list counts by its text when that spells a known one).
    @inline(__always)
    func addOutcome(slot: Int, kind: EventKind, name: AnalyticsNameRef?, at: OrderKey, strings: SnapshotStrings) {
        let f = base + slot
        f.pointee.kindsSeen |= UInt8(truncatingIfNeeded: SessionSummary.bit(kind))
        var terminal: Exit?
        switch kind {
        case .analytics:
            var known: AnalyticsName?
            switch name {
            case .known(let k)?: known = k
            case .unknown(let id)?: known = strings.string(id).flatMap { AnalyticsName(rawValue: $0) }
            case nil: break
            }
            if let known {
                f.pointee.namesSeen |= UInt8(truncatingIfNeeded: SessionSummary.bit(known))
                if known == .onboardingCompleted { terminal = .completed }
            }
        case .openPaywall: terminal = .paywall
        case .close: terminal = .closed
        case .error: terminal = .error
        default: break
        }
        if let terminal, f.pointee.outcomeAt < at {
            f.pointee.outcomeAt = at
            f.pointee.outcome = terminal
        }
    }

    /// The summary of the session at `slot`: the fields a lean fold reads are those
    /// ``SessionFold/summary(name:strings:needs:reachBuffer:)`` gives for the same events; the others keep their
    /// initial values (nothing reads them, see ``FoldNeeds/lean``).
    func summary(
        slot: Int, name: String, strings: SnapshotStrings, needs: FoldNeeds,
        reachBuffer: inout [Int64]
    ) -> SessionSummary {
        let s = SessionSummary(id: name)
        summarize(slot: slot, into: s, strings: strings, needs: needs, reachBuffer: &reachBuffer)
        return s
    }

    /// ``summary(slot:name:strings:needs:reachBuffer:)`` written into `s`, a summary with nothing folded
    /// (``SessionSummary/reset(id:)``).
    func summarize(
        slot: Int, into s: SessionSummary, strings: SnapshotStrings, needs: FoldNeeds, reachBuffer: inout [Int64]
    ) {
        let f = base + slot  // read in place: a copy of the fold is a 128-byte memcpy call
        guard f.pointee.events > 0 else { return }
        if needs.onboarding, f.pointee.furthest >= 0 { s.onboarding = strings.string(f.pointee.onboarding) }
        s.started = Timestamp(microseconds: f.pointee.first.time)
        if lasts { s.ended = Timestamp(microseconds: f.pointee.last.time) }
        s.eventCount = f.pointee.events
        if f.pointee.furthest >= 0 {
            s.furthestScreen = Int(f.pointee.furthest)
            if lasts { s.lastScreen = Int(f.pointee.lastScreen) }
            s.totalScreens = f.pointee.totalScreens == .min ? nil : f.pointee.totalScreens
        }
        if outcomes {
            s.kindsSeen = UInt32(f.pointee.kindsSeen)
            s.namesSeen = UInt32(f.pointee.namesSeen)
            s.completed = s.namesSeen & SessionSummary.bit(AnalyticsName.onboardingCompleted) != 0
            s.emailCollected = s.namesSeen & SessionSummary.bit(AnalyticsName.userEmailCollected) != 0
            s.paywall = s.kindsSeen & SessionSummary.bit(EventKind.openPaywall) != 0
            s.closed = s.kindsSeen & SessionSummary.bit(EventKind.close) != 0
            s.outcome = f.pointee.outcome
        }
        if reachTimes, f.pointee.furthest >= 0 {
            let pool = self.pool
            let rows = self.rows + slot, rowScreens = self.rowScreens, rowCapacity = self.rowCapacity
            s.reachTimes = SessionFold.reachTimes(furthest: Int(f.pointee.furthest), buffer: &reachBuffer) { earliest in
                // The row's screens, then the chain's. Every screen of the chain is at most `furthest` (checked all
                // the same: `earliest` is raw memory); each appears once.
                for screen in 0..<min(rowScreens, Int(f.pointee.furthest) + 1) {
                    earliest[screen] = rows[screen * rowCapacity]
                }
                let furthest = f.pointee.furthest
                if f.pointee.headScreen >= 0 && f.pointee.headScreen <= furthest {
                    earliest[Int(f.pointee.headScreen)] = min(earliest[Int(f.pointee.headScreen)], f.pointee.headTime)
                }
                var i = f.pointee.headPrevious
                while i >= 0 {
                    let entry = pool[Int(i)]
                    if entry.screen >= 0 && entry.screen <= furthest {
                        earliest[Int(entry.screen)] = min(earliest[Int(entry.screen)], entry.time)
                    }
                    i = entry.previous
                }
            }
            if clientNames !== strings { clientNames = strings }
            s.screenClients = .lean(Unmanaged.passUnretained(self), slot: slot, furthest: Int(f.pointee.furthest))
        }
    }

    /// Calls `body` with each distinct (screen index, client id) pair of the session at `slot`, whose screens go up
    /// to `furthest`: its row cells in screen order, then its other pairs. Reads the cells in place (a list per
    /// session cost an allocation and a copy).
    @inline(__always)
    func forEachClient(slot: Int, furthest: Int, _ body: (Int, StringID) -> Void) {
        var cell = clientRows + slot
        for screen in 0..<min(rowScreens, furthest + 1) {
            if cell.pointee != RecordFormat.absent { body(screen, cell.pointee) }
            cell += rowCapacity
        }
        if !otherClients.isEmpty, let others = otherClients[slot] {
            for pair in others { body(Int(pair >> 32), UInt32(truncatingIfNeeded: pair)) }
        }
    }

    /// The number of events folded into the session at `slot`.
    func events(slot: Int) -> Int { base[slot].events }
}

extension LeanFolds {
    /// Empty folds for the same sessions with the same settings as `other`: a worker's share of a scan split by
    /// key range, merged back with ``merge(_:)``. Sessions `other` excludes are excluded here too.
    /// - Complexity: O(sessions × row screens); the pool is reserved as `other`'s was, and touched only as it fills.
    convenience init(sameSessionsAs other: LeanFolds) {
        self.init(
            capacity: other.count, events: other.poolCapacity, reachTimes: other.reachTimes,
            outcomes: other.outcomes, lasts: other.lasts, oneOnboarding: other.oneOnboarding,
            rowScreens: other.rowScreens)
        append(count: other.count)
        for slot in 0..<other.count where other.base[slot].excluded { base[slot].excluded = true }
    }

    /// Appends `other`'s sessions, none of which these hold, after these (slots `count..<count + other.count`), as they
    /// are: the folds copied whole, their chains' pool entries moved to the end of this pool, their rows and client
    /// pairs copied. What a fold split by sessions (each worker a range of the session index's buckets) gathers in
    /// one, instead of merging each session into an empty one.
    /// - Throws: ``QueryError`` when the screen times outgrow the pool (see the type's discussion).
    /// - Complexity: O(`other`'s sessions × row screens + its pool entries), as copies.
    func append(contentsOf other: LeanFolds) throws(QueryError) {
        precondition(
            other.rowScreens == rowScreens && other.reachTimes == reachTimes && other.lasts == lasts
                && other.outcomes == outcomes)
        let first = count, n = other.count
        guard n > 0 else { return }
        append(count: n)
        (base + first).update(from: other.base, count: n)
        if other.poolCount > 0 {
            while poolCount + other.poolCount > poolCapacity { try growPool() }
            let offset = Int32(truncatingIfNeeded: poolCount)
            for i in 0..<other.poolCount {
                var entry = other.pool[i]
                if entry.previous >= 0 { entry.previous &+= offset }
                pool[poolCount + i] = entry
            }
            poolCount += other.poolCount
            for slot in first..<(first + n) where base[slot].headPrevious >= 0 { base[slot].headPrevious &+= offset }
        }
        for s in 0..<rowScreens {
            (rows + s * rowCapacity + first).update(from: other.rows + s * other.rowCapacity, count: n)
            (clientRows + s * rowCapacity + first).update(from: other.clientRows + s * other.rowCapacity, count: n)
        }
        for (slot, pairs) in other.otherClients { otherClients[first + slot] = pairs }
    }

    /// Folds `other`'s sessions into these, slot by slot: `other` (made by ``init(sameSessionsAs:)``) folded other
    /// events of the same sessions.
    /// - Throws: ``QueryError`` when the screen times outgrow the pool (see the type's discussion).
    /// - Complexity: O(sessions × row screens + `other`'s chained screen times).
    func merge(_ other: LeanFolds) throws(QueryError) {
        precondition(other.count == count)
        if reachTimes { mergeRows(other) }
        for slot in 0..<count { try merge(other, slot, into: slot, rows: false) }
    }

    /// Merges the rows of `other`, whose slots are these: a sweep along each screen's row (slot by slot, a session's
    /// cells lie a row apart, a cache line each).
    private func mergeRows(_ other: LeanFolds) {
        for s in 0..<rowScreens {
            let times = rows + s * rowCapacity, theirTimes = other.rows + s * other.rowCapacity
            for slot in 0..<count where theirTimes[slot] < times[slot] { times[slot] = theirTimes[slot] }
            let clients = clientRows + s * rowCapacity, theirClients = other.clientRows + s * other.rowCapacity
            for slot in 0..<count where theirClients[slot] != clients[slot] {
                noteClient(cell: s * rowCapacity + slot, slot: slot, Int32(s), theirClients[slot])
            }
        }
    }

    /// Folds `other`'s session at slot `theirs` into the session at `slot`: `other`, with the same settings, folded
    /// other events of the same session. The session then holds what folding both sets of events gives: firsts and
    /// lasts by their `(time, seq)` positions, counts added, kinds and names united, each screen's earliest time.
    /// - Throws: ``QueryError`` when the screen times outgrow the pool (see the type's discussion).
    /// - Complexity: O(row screens + the session's chained screen times in `other`).
    ///
    /// With `rows` false, the caller merged the session's rows already (``mergeRows(_:)``).
    func merge(_ other: LeanFolds, _ theirs: Int, into slot: Int, rows mergesRows: Bool = true) throws(QueryError) {
        precondition(other.rowScreens == rowScreens && other.reachTimes == reachTimes && other.lasts == lasts)
        let f = base + slot, o = other.base + theirs
        guard o.pointee.events > 0 else { return }
        if o.pointee.first < f.pointee.first { f.pointee.first = o.pointee.first }
        if f.pointee.last < o.pointee.last { f.pointee.last = o.pointee.last }
        f.pointee.events &+= o.pointee.events
        if o.pointee.totalScreens > f.pointee.totalScreens { f.pointee.totalScreens = o.pointee.totalScreens }
        if o.pointee.furthest >= 0 {
            // With one onboarding every event with a screen names the same one (``oneOnboarding``).
            if oneOnboarding || o.pointee.firstScreenAt < f.pointee.firstScreenAt {
                f.pointee.firstScreenAt = min(f.pointee.firstScreenAt, o.pointee.firstScreenAt)
                f.pointee.onboarding = o.pointee.onboarding
            }
            if o.pointee.furthest > f.pointee.furthest { f.pointee.furthest = o.pointee.furthest }
            if f.pointee.lastScreenAt < o.pointee.lastScreenAt {
                f.pointee.lastScreenAt = o.pointee.lastScreenAt
                f.pointee.lastScreen = o.pointee.lastScreen
            }
        }
        f.pointee.kindsSeen |= o.pointee.kindsSeen
        f.pointee.namesSeen |= o.pointee.namesSeen
        if o.pointee.outcome != nil, f.pointee.outcomeAt < o.pointee.outcomeAt {
            f.pointee.outcomeAt = o.pointee.outcomeAt
            f.pointee.outcome = o.pointee.outcome
        }
        guard reachTimes else { return }
        for s in 0..<(mergesRows ? rowScreens : 0) {
            let entry = rows + (s * rowCapacity + slot), their = other.rows[s * other.rowCapacity + theirs]
            if their < entry.pointee { entry.pointee = their }
            noteClient(
                cell: s * rowCapacity + slot, slot: slot, Int32(s), other.clientRows[s * other.rowCapacity + theirs])
        }
        if !other.otherClients.isEmpty, let pairs = other.otherClients[theirs] {
            for pair in pairs {
                noteOtherClient(slot: slot, Int32(truncatingIfNeeded: pair >> 32), UInt32(truncatingIfNeeded: pair))
            }
        }
        // The chain's screens, each once: noted as a scan notes them, so each keeps its earliest time.
        if o.pointee.headScreen >= 0 { try noteScreen(f, o.pointee.headScreen, o.pointee.headTime) }
        var i = o.pointee.headPrevious
        while i >= 0 {
            let entry = other.pool[Int(i)]
            try noteScreen(f, entry.screen, entry.time)
            i = entry.previous
        }
    }
}
