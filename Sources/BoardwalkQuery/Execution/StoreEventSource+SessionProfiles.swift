import BoardwalkCodec
import BoardwalkStore

/// Every session of a store with its profile, from the `session_names` index alone
/// (``StoreEventSource/sessionProfiles(_:sessions:ticker:)``): the profiles as distinct strings, each session as an
/// index into them.
struct SessionProfiles {
    /// Per session id (an index of the array): ``notSeen`` for an id that names no session, ``noProfile`` for a session
    /// whose events carry no profile, else its profile's index in ``profiles``.
    var slots: [UInt32]
    /// The distinct profiles, in the order of their string ids.
    var profiles: [String]
    static let notSeen = UInt32.max
    static let noProfile = UInt32.max - 1

    /// Calls `body` with each session's id and its profile (nil: none), in session id order.
    func forEachSession(
        ticker: inout CancellationTicker, _ body: (StringID, String?) throws(QueryError) -> Bool
    ) throws(QueryError) {
        for (session, slot) in slots.enumerated() where slot != SessionProfiles.notSeen {
            try ticker.tick()
            guard try body(StringID(session), slot == SessionProfiles.noProfile ? nil : profiles[Int(slot)]) else {
                return
            }
        }
    }

    /// The sessions of each profile, in the order of ``profiles``, and the sessions without one.
    /// - Complexity: O(session ids), 8 bytes per profile.
    func sessionsByProfile() -> (counts: [Int], none: Int) {
        var counts = [Int](repeating: 0, count: profiles.count)
        var none = 0
        for slot in slots where slot != SessionProfiles.notSeen {
            if slot == SessionProfiles.noProfile { none += 1 } else { counts[Int(slot)] += 1 }
        }
        return (counts, none)
    }
}

extension StoreEventSource {
    /// Whether a fold of the whole store with `needs` may read the sessions' profiles from `session_names`
    /// (``FoldNeeds/profilesOnly``): not when the run reads around damaged blocks, whose sessions the index still
    /// names.
    static func foldsFromSessionNames(_ needs: FoldNeeds) -> Bool {
        needs.profilesOnly && damagedBlocks == nil
    }

    /// Every session of the store with its profile (``FoldNeeds/profilesOnly``), from the `session_names` index alone:
    /// its entries name each session and each profile its events carry. Each distinct profile's string is read once,
    /// all of them in one pass over the strings (``Snapshot/strings(for:)``).
    ///
    /// A session's profile is that of its first event that carries one (rule 12), which the index cannot tell when
    /// a session's events carry two: then, and when two profile ids name strings that Swift compares equal (a group's
    /// spelling would depend on the order of the sessions), or when the index names other than the store's count of
    /// sessions, or a string does not read, the answer is nil and the caller folds the events instead.
    /// - Complexity: O(entries of the index + session ids + the profiles' strings) time; 4 bytes per session id and
    ///   per string id of memory, and the profiles' strings.
    static func sessionProfiles(
        _ snapshot: Snapshot, sessions expected: Int, ticker: inout CancellationTicker
    ) throws -> SessionProfiles? {
        let notSeen = SessionProfiles.notSeen, noProfile = SessionProfiles.noProfile
        let limit = Int(snapshot.sessionBucketLimit) << 6
        // First each session's profile id; then, once the distinct ones are numbered, its profile's index.
        var slots = [UInt32](repeating: notSeen, count: limit)
        var ambiguous = false, outside = false
        try slots.withUnsafeMutableBufferPointer { slots in
            var entries = 0
            try snapshot.forEachSessionNameEntry { session, profile in
                entries &+= 1
                if entries & 4095 == 0 { try ticker.tick(4096) }
                guard Int(session) < limit else {
                    outside = true
                    return false
                }
                let current = slots[Int(session)]
                if let profile {
                    if current == notSeen || current == noProfile {
                        slots[Int(session)] = profile
                    } else if current != profile {
                        // Only the events tell which of the two came first: the caller folds them.
                        ambiguous = true
                        return false
                    }
                } else if current == notSeen {
                    slots[Int(session)] = noProfile
                }
                return true
            }
        }
        guard !ambiguous, !outside else { return nil }
        // The distinct profile ids in id order, numbered: a mark per string id, then one pass over the marks.
        let strings = Int(snapshot.stringCount)
        var numbers = [UInt32](repeating: notSeen, count: strings)
        var sessions = 0
        for profile in slots where profile != notSeen {
            sessions += 1
            guard profile != noProfile else { continue }
            guard Int(profile) < strings else { return nil }
            numbers[Int(profile)] = 0
        }
        guard sessions == expected else { return nil }
        var ids: [StringID] = []
        for id in numbers.indices {
            if id & 4095 == 0 { try ticker.tick(4096) }
            guard numbers[id] != notSeen else { continue }
            numbers[id] = UInt32(ids.count)
            ids.append(StringID(id))
        }
        guard let profiles = try? snapshot.strings(for: ids) else { return nil }
        guard spellingsAreDistinct(profiles) else { return nil }
        for (session, profile) in slots.enumerated() where profile != notSeen && profile != noProfile {
            slots[session] = numbers[Int(profile)]
        }
        return SessionProfiles(slots: slots, profiles: profiles)
    }

    /// Whether no two of `strings` (distinct byte strings, as interned ones are) compare equal as Swift strings: only
    /// strings with more than one spelling can (``Plan/hasOneSpelling(_:)``: beyond ASCII, or with `K`, `;` or `` ` ``,
    /// which the Kelvin sign, the Greek question mark and the Greek varia decompose to), and only those are hashed.
    /// - Complexity: O(bytes), and a hash of each string with more than one spelling.
    static func spellingsAreDistinct(_ strings: [String]) -> Bool {
        var others = Set<String>()
        for string in strings where !Plan.hasOneSpelling(string) {
            guard others.insert(string).inserted else { return false }
        }
        return true
    }

    /// The store's sessions counted by profile, each group once (nil: the sessions without a profile), when the whole
    /// store's query reads of each session nothing but its profile (``FoldNeeds/profilesOnly``) and the
    /// `session_names` index tells each session's profile; nil otherwise, for the caller to fold the sessions.
    /// A `count by profile` then costs a count per session id and a row per profile, not a summary and a row per
    /// session.
    /// - Complexity: as ``sessionProfiles(_:sessions:ticker:)``.
    func sessionCountsByProfile(
        needs: FoldNeeds, cancellation: CancellationFlag?, text: String
    ) throws(QueryError) -> [(profile: String?, sessions: Int)]? {
        guard StoreEventSource.foldsFromSessionNames(needs) else { return nil }
        var groups: [(profile: String?, sessions: Int)]? = nil
        var ticker = CancellationTicker(cancellation: cancellation, text: text)
        try reading { snapshot in
            let expected = (try? snapshot.stats())?.sessions ?? 0
            guard let named = try StoreEventSource.sessionProfiles(snapshot, sessions: expected, ticker: &ticker)
            else { return }
            let (counts, none) = named.sessionsByProfile()
            var found = zip(named.profiles, counts).map { (profile: Optional($0), sessions: $1) }
            if none > 0 { found.append((nil, none)) }
            groups = found
        }
        return groups
    }
}
