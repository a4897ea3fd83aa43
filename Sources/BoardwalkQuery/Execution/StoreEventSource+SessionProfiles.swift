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
    static func sessionProfiles(_ snapshot: Snapshot, strings: SnapshotStrings, sessions expected: Int) throws
        -> (ids: [StringID], profiles: [String?])?
    {
        let notSeen = StringID.max, noProfile = StringID.max - 1, several = StringID.max - 2
        let limit = Int(snapshot.sessionBucketLimit) << 6
        var state = [StringID](repeating: notSeen, count: limit)
        var ambiguous = false, outside = false
        try state.withUnsafeMutableBufferPointer { state in
            try snapshot.forEachSessionNameEntry { session, profile in
                guard Int(session) < limit else {
                    outside = true
                    return
                }
                let current = state[Int(session)]
                if let profile {
                    if current == notSeen || current == noProfile {
                        state[Int(session)] = profile
                    } else if current != profile {
                        state[Int(session)] = several
                        ambiguous = true
                    }
                } else if current == notSeen {
                    state[Int(session)] = noProfile
                }
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
