import BoardwalkCodec

/// A lean fold's client ids of one session (``LeanFolds/forEachClientID(slot:_:)``), handed to the screen funnel
/// by interned id rather than as strings. Read while the fold's read transaction is open (the sink counts a summary
/// in the fold's callback): ids met for the first time are named then.
struct LeanClientIDs {
    let folds: LeanFolds
    let slot: Int
    /// The dictionary the ids are interned in.
    let strings: SnapshotStrings
}

/// How many sessions of one screen funnel group carry each client id at each screen index: what a row's
/// `screen_cid` is chosen from (``ScreenClientIDs``).
///
/// The sessions of a store's lean folds are counted by interned id, in a short list per screen (a screen has one
/// id, or a few across edits of the onboarding), so a session costs a comparison per screen it reached and no
/// hash; ids are named once, when the rows are made. Sessions folded otherwise are counted by text.
final class ScreenClientTally {
    // Unchecked: a tally is used by one sink on one thread, and the runtime's exclusivity checks on these class
    // properties cost more than the counting.
    /// The (screen, interned id) pairs met, in the dictionary of ``strings``, with their text (resolved when the pair
    /// is first met, while the fold's read transaction is open) and how many sessions carry them. A screen index has
    /// one id per onboarding (or a few, across its edits), so a funnel over many onboardings meets many pairs: they are
    /// found through an open-addressing table keyed by `screen << 32 | id` with a multiplicative hash.
    @exclusivity(unchecked) private var pairs: [(screen: Int, id: StringID, name: String?, sessions: Int)] = []
    @exclusivity(unchecked) private var table = [Int32](repeating: -1, count: 64)
    @exclusivity(unchecked) private var keys = [UInt64](repeating: 0, count: 64)
    @exclusivity(unchecked) private var strings: SnapshotStrings?
    /// Per screen, sessions by id's text: the sessions of other folds.
    private var byText: [[String: Int]] = []

    /// Counts `summary`'s distinct (screen, client id) pairs.
    /// - Complexity: O(screens the session reached).
    func add(_ summary: SessionSummary) {
        guard let lean = summary.leanClientIDs else {
            for entry in summary.screenClientIDs { addText(entry.screen, entry.id) }
            return
        }
        if strings == nil { strings = lean.strings }
        if strings === lean.strings {
            lean.folds.forEachClientID(slot: lean.slot) { screen, id in addRef(Int(screen), id, lean.strings) }
        } else {
            lean.folds.forEachClientID(slot: lean.slot) { screen, id in
                if let name = lean.strings.string(id) { addText(Int(screen), name) }
            }
        }
    }

    @inline(__always)
    private func addRef(_ screen: Int, _ id: StringID, _ strings: SnapshotStrings) {
        guard screen >= 0 else { return }
        let key = UInt64(screen) << 32 | UInt64(id)
        let mask = table.count - 1
        var i = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
        while true {
            let p = table[i]
            if p < 0 { break }
            if keys[i] == key {
                pairs[Int(p)].sessions &+= 1
                return
            }
            i = (i + 1) & mask
        }
        insert(key, at: i, screen, id, strings)
    }

    /// Not inlined: once per distinct pair.
    @inline(never)
    private func insert(_ key: UInt64, at i: Int, _ screen: Int, _ id: StringID, _ strings: SnapshotStrings) {
        table[i] = Int32(pairs.count)
        keys[i] = key
        pairs.append((screen, id, strings.string(id), 1))
        guard pairs.count * 2 > table.count else { return }
        let size = table.count * 2
        table = [Int32](repeating: -1, count: size)
        keys = [UInt64](repeating: 0, count: size)
        for (n, pair) in pairs.enumerated() {
            let key = UInt64(pair.screen) << 32 | UInt64(pair.id)
            var j = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 40) & (size - 1)
            while table[j] >= 0 { j = (j + 1) & (size - 1) }
            table[j] = Int32(n)
            keys[j] = key
        }
    }

    private func addText(_ screen: Int, _ id: String) {
        guard screen >= 0 else { return }
        while byText.count <= screen { byText.append([:]) }
        byText[screen][id, default: 0] += 1
    }

    /// The id the most sessions carry at `screen`, ties to the smallest in UTF-8 byte order; nil when none does.
    func mostFrequent(at screen: Int) -> String? {
        var counts = screen < byText.count ? byText[screen] : [:]
        for pair in pairs where pair.screen == screen {
            if let name = pair.name { counts[name, default: 0] += pair.sessions }
        }
        return ScreenClientIDs.mostFrequent(counts)
    }
}
