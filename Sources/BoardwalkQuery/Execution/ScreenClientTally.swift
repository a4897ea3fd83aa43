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
    /// Per screen, the first interned id met there (``RecordFormat/absent``: none yet), in the dictionary of
    /// ``strings``, its text (resolved when it is first met, while the fold's read transaction is open), and how many
    /// sessions carry it: a screen nearly always has one id, so a session costs a comparison per screen.
    @exclusivity(unchecked) private var firstIDs: [StringID] = []
    @exclusivity(unchecked) private var firstNames: [String?] = []
    @exclusivity(unchecked) private var firstSessions: [Int] = []
    /// The other ids met at a screen, with their sessions.
    private var otherIDs: [(screen: Int, id: StringID, name: String?, sessions: Int)] = []
    private var strings: SnapshotStrings?
    /// Per screen, sessions by id's text: the sessions of other folds.
    private var byText: [[String: Int]] = []

    /// Counts `summary`'s distinct (screen, client id) pairs.
    /// - Complexity: O(screens the session reached), and the ids met at a screen besides its first.
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
        if screen >= firstIDs.count { grow(to: screen + 1) }
        if firstIDs[screen] == id {
            firstSessions[screen] &+= 1
        } else if firstIDs[screen] == RecordFormat.absent {
            firstIDs[screen] = id
            firstNames[screen] = strings.string(id)
            firstSessions[screen] = 1
        } else {
            addOther(screen, id, strings)
        }
    }

    private func grow(to screens: Int) {
        let n = screens - firstIDs.count
        firstIDs += repeatElement(RecordFormat.absent, count: n)
        firstNames += repeatElement(nil, count: n)
        firstSessions += repeatElement(0, count: n)
    }

    /// Not inlined: rare (a screen whose id changed across edits of the onboarding).
    @inline(never)
    private func addOther(_ screen: Int, _ id: StringID, _ strings: SnapshotStrings) {
        if let i = otherIDs.firstIndex(where: { $0.screen == screen && $0.id == id }) {
            otherIDs[i].sessions += 1
        } else {
            otherIDs.append((screen, id, strings.string(id), 1))
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
        if screen < firstIDs.count, firstIDs[screen] != RecordFormat.absent, let name = firstNames[screen] {
            counts[name, default: 0] += firstSessions[screen]
        }
        for other in otherIDs where other.screen == screen {
            if let name = other.name { counts[name, default: 0] += other.sessions }
        }
        return ScreenClientIDs.mostFrequent(counts)
    }
}
