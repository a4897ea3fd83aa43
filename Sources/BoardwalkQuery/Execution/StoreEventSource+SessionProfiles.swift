import BoardwalkCodec
import BoardwalkStore

extension StoreEventSource {
    /// Whether a fold of the whole store with `needs` may read the sessions' profiles from `session_names`
    /// (``FoldNeeds/profilesOnly``): not when the run reads around damaged blocks, whose sessions the index still
    /// names.
    static func foldsFromSessionNames(_ needs: FoldNeeds) -> Bool {
        needs.profilesOnly && damagedBlocks == nil
    }

    /// Every session of the store with its profile (``FoldNeeds/profilesOnly``), in session id order, from the
    /// `session_names` index alone: its entries name each session and each profile its events carry.
    ///
    /// A session's profile is that of its first event that carries one (rule 12), which the index cannot tell when
    /// a session's events carry two: then, and when two profile ids name strings that Swift compares equal (a group's
    /// spelling would depend on the order of the sessions), or when the index names other than the store's count of
    /// sessions, the answer is nil and the caller folds the events instead.
    /// - Complexity: O(entries of the index + the store's strings' count) time, 4 bytes per string id of memory, and
    ///   a look-up of each distinct profile's string.
    static func sessionProfiles(
        _ snapshot: Snapshot, strings: SnapshotStrings, sessions expected: Int, ticker: inout CancellationTicker
    ) throws -> (ids: [StringID], profiles: [String?])? {
        let notSeen = StringID.max, noProfile = StringID.max - 1
        let limit = Int(snapshot.sessionBucketLimit) << 6
        var state = [StringID](repeating: notSeen, count: limit)
        var ambiguous = false, outside = false
        try state.withUnsafeMutableBufferPointer { state in
            var entries = 0
            try snapshot.forEachSessionNameEntry { session, profile in
                entries &+= 1
                if entries & 4095 == 0 { try ticker.tick(4096) }
                guard Int(session) < limit else {
                    outside = true
                    return false
                }
                let current = state[Int(session)]
                if let profile {
                    if current == notSeen || current == noProfile {
                        state[Int(session)] = profile
                    } else if current != profile {
                        // Only the events tell which of the two came first: the caller folds them.
                        ambiguous = true
                        return false
                    }
                } else if current == notSeen {
                    state[Int(session)] = noProfile
                }
                return true
            }
        }
        guard !ambiguous, !outside else { return nil }
        var ids: [StringID] = []
        var profiles: [String?] = []
        ids.reserveCapacity(expected)
        profiles.reserveCapacity(expected)
        var resolved: [StringID: String] = [:]
        var spellings: [String: StringID] = [:]
        for (session, profile) in state.enumerated() where profile != notSeen {
            if session & 4095 == 0 { try ticker.tick(4096) }
            ids.append(StringID(session))
            guard profile != noProfile else {
                profiles.append(nil)
                continue
            }
            if let text = resolved[profile] {
                profiles.append(text)
                continue
            }
            guard let text = strings.string(profile) else { return nil }
            // Another id with a string equal to this one: its group would take the spelling met first.
            if spellings.updateValue(profile, forKey: text) != nil { return nil }
            resolved[profile] = text
            profiles.append(text)
        }
        return ids.count == expected ? (ids, profiles) : nil
    }
}
