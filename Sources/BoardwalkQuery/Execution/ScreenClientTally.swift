import BoardwalkCodec

/// Where a folded session's (screen index, screen client id) pairs are, for a screen funnel's `screen_cid` column
/// (rule 3).
enum ScreenClients {
    /// The session at `slot` of a lean fold, whose screens go up to `furthest`. Unretained (a retain and a release
    /// per session and per read): valid while the folds live, which a summary's consumer in the scan's callback
    /// can count on, and nothing else reads.
    case lean(Unmanaged<LeanFolds>, slot: Int, furthest: Int)
    /// A full fold's (``SessionFold``): the client id of each screen's entry (``RecordFormat/absent``: none), then
    /// the other pairs as `screen << 32 | id`; the ids are snapshot strings of `names`. The fold's own arrays,
    /// shared, not copied.
    case fold(screens: [(screen: Int32, time: Int64, client: StringID)], others: [UInt64], names: SnapshotStrings)

    /// The strings that name the ids.
    var names: SnapshotStrings? {
        switch self {
        case .lean(let folds, _, _): folds._withUnsafeGuaranteedRef { $0.clientNames }
        case .fold(_, _, let names): names
        }
    }

    /// Calls `body` with each pair: a lean fold's row cells in screen order, then the other pairs.
    @inline(__always)
    func forEach(_ body: (Int, StringID) -> Void) {
        switch self {
        case .lean(let folds, let slot, let furthest):
            folds._withUnsafeGuaranteedRef { $0.forEachClient(slot: slot, furthest: furthest, body) }
        case .fold(let screens, let others, _):
            for entry in screens where entry.client != RecordFormat.absent { body(Int(entry.screen), entry.client) }
            for pair in others { body(Int(pair >> 32), UInt32(truncatingIfNeeded: pair)) }
        }
    }
}

/// How many of a screen funnel group's sessions have events with each `screen_cid` at each screen index: the
/// funnel's `screen_cid` column (rule 3), the most frequent one per step.
///
/// A session counts once per distinct (screen index, client id) pair it has events with. Sessions arrive about in
/// the order the scan met them, one onboarding's after another, so consecutive sessions usually name the same client
/// id at a step: each step keeps the id of its current run and a count, and only a change of id costs a string and
/// a dictionary update. A reference type: a group's tally is updated in place, without a copy-on-write check per
/// pair.
///
/// Memory: one entry per distinct client id per step.
final class ScreenClientTally {
    /// Per step: the sessions counted by client id, besides the current run.
    private var counts: [[String: Int]] = []
    /// Per step, the current run: its client id as the snapshot's string id (``none``: a text), its sessions and its
    /// text. The first two in flat buffers: a pair that extends a run touches nothing else.
    @exclusivity(unchecked) private var runIDs: UnsafeMutablePointer<UInt32>
    @exclusivity(unchecked) private var runCounts: UnsafeMutablePointer<Int>
    private var runTexts: [String?] = []
    @exclusivity(unchecked) private var steps = 0
    @exclusivity(unchecked) private var capacity = 16

    private static let none = UInt32.max

    init() {
        runIDs = .allocate(capacity: capacity)
        runCounts = .allocate(capacity: capacity)
    }

    deinit {
        runIDs.deallocate()
        runCounts.deallocate()
    }

    /// Makes room for steps `0..<n`.
    @inline(__always)
    func reserve(steps n: Int) {
        if n > steps { grow(to: n) }
    }

    @inline(never)
    private func grow(to n: Int) {
        if n > capacity {
            let bigger = max(capacity * 2, n)
            let ids = UnsafeMutablePointer<UInt32>.allocate(capacity: bigger)
            let runs = UnsafeMutablePointer<Int>.allocate(capacity: bigger)
            ids.moveInitialize(from: runIDs, count: steps)
            runs.moveInitialize(from: runCounts, count: steps)
            runIDs.deallocate()
            runCounts.deallocate()
            (runIDs, runCounts, capacity) = (ids, runs, bigger)
        }
        (runIDs + steps).initialize(repeating: ScreenClientTally.none, count: n - steps)
        (runCounts + steps).initialize(repeating: 0, count: n - steps)
        counts += repeatElement([:], count: n - steps)
        runTexts += repeatElement(nil, count: n - steps)
        steps = n
    }

    private func flush(_ step: Int) {
        if let text = runTexts[step], runCounts[step] > 0 { counts[step][text, default: 0] += runCounts[step] }
        runCounts[step] = 0
    }

    /// Starts a new run at `step` with one session.
    @inline(never)
    private func start(_ step: Int, id: UInt32, text: String?) {
        flush(step)
        runIDs[step] = id
        runTexts[step] = text
        runCounts[step] = 1
    }

    /// Adds a session's pair (`step`, client id `id`), a string id of `names`; `step` is below a ``reserve(steps:)``.
    @inline(__always)
    func add(step: Int, id: UInt32, names: SnapshotStrings?) {
        if runIDs[step] == id, runCounts[step] > 0 {
            runCounts[step] &+= 1
        } else {
            start(step, id: id, text: names?.string(id))
        }
    }

    /// Adds a folded session's pairs.
    func add(_ clients: ScreenClients?) {
        guard let clients else { return }
        let names = clients.names
        clients.forEach { step, id in
            reserve(steps: step + 1)
            add(step: step, id: id, names: names)
        }
    }

    /// Adds one session's client id `text` at screen index `step` (a session's rows; once per distinct pair).
    func add(step: Int, text: String) {
        reserve(steps: step + 1)
        if runIDs[step] == ScreenClientTally.none, runCounts[step] > 0, runTexts[step] == text {
            runCounts[step] += 1
        } else {
            start(step, id: ScreenClientTally.none, text: text)
        }
    }

    /// Adds the distinct (screen index, `screen_cid`) pairs of a session's `events`.
    func add<R: EventRow>(events: [R]) {
        var seen: [(Int, String)] = []
        for event in events {
            guard let screen = event.screenIndex, case .string(let text) = event.value(.screenCID) else { continue }
            if seen.contains(where: { $0.0 == screen && $0.1 == text }) { continue }
            seen.append((screen, text))
            add(step: screen, text: text)
        }
    }

    /// The client id most sessions have at `step` (ties: the smallest in byte order); null when none has one.
    /// - Complexity: O(distinct client ids at the step).
    func mostFrequent(step: Int) -> Value {
        guard step < steps else { return .null }
        flush(step)
        var best: (text: String, count: Int)?
        for (text, count) in counts[step] {
            if let b = best, count < b.count || (count == b.count && !text.utf8.lexicographicallyPrecedes(b.text.utf8))
            {
                continue
            }
            best = (text, count)
        }
        return best.map { .string($0.text) } ?? .null
    }
}
