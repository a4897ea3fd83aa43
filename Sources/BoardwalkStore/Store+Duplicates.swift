import BoardwalkModel

extension Store {
    /// The events of `events` that ``append(_:checkpoint:keepIdentical:)`` would store, appended in this order to an
    /// empty store: each that is not a duplicate of an earlier one (docs/storage.md, "Duplicates"), as it is.
    ///
    /// An event with an event id is a duplicate of an earlier one with the same id, time, onboarding and screen; one
    /// without an id (or with an empty one), unless `keepIdentical`, of an earlier one without an id that equals it
    /// once both are ``normalized(_:)`` (a session named as an inferred one, `inferred:…`, counts as none). An
    /// in-memory source that must answer as a store of the same events does (`boardwalk query --generated`) calls it.
    /// The store compares encoded records: it tells `0.0` from `-0.0` in a number answer, which this does not.
    /// - Complexity: O(n) expected for n events.
    public static func withoutDuplicates(_ events: some Sequence<Event>, keepIdentical: Bool = false) -> [Event] {
        var ids = Set<DuplicateID>()
        var contents = Set<Event>()
        var kept: [Event] = []
        for event in events {
            var key = normalized(event)
            if let id = key.eventID {
                if ids.insert(
                    DuplicateID(
                        id: id, time: key.time, onboarding: key.meta?.onboardingID, screen: key.meta?.screenIndex)
                )
                .inserted {
                    kept.append(event)
                }
                continue
            }
            if keepIdentical {
                kept.append(event)
                continue
            }
            if let session = key.session, isInferredName(session) { key.session = nil }
            if contents.insert(key).inserted { kept.append(event) }
        }
        return kept
    }
}

/// What makes two events with an event id duplicates, as values (``Store/withoutDuplicates(_:keepIdentical:)``).
private struct DuplicateID: Hashable {
    var id: String
    var time: Timestamp
    var onboarding: String?
    var screen: Int?
}
