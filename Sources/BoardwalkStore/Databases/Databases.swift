import BoardwalkCodec
import BoardwalkModel
internal import CLMDB
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The handles of the store's named databases.
struct Databases: Sendable {
    let meta, events, sessions, onboardingSessions, batches, strings, inferred, onboardings, checkpoints: Database
    /// Sessions with events under more than one onboarding key (`Store+Spanning.swift`).
    let spanningSessions: Database
    /// The session index's references of the batches since the last fold (SessionLog.swift).
    let sessionLog: Database
    /// The blocks of the batches since the last fold of the event log (EventLog.swift).
    let eventLog: Database
    /// Sessions by the hash of their id's or a profile's name, in sorted runs (`SessionNames.swift`).
    let sessionNames: Database
    /// Each `events` block's head (its bytes up to its first event), under the block's key (Blocks.swift).
    let blockHeads: Database

    init(_ h: [String: Database]) {
        meta = h[Layout.meta]!
        events = h[Layout.events]!
        sessions = h[Layout.sessions]!
        onboardingSessions = h[Layout.onboardingSessions]!
        batches = h[Layout.batches]!
        strings = h[Layout.strings]!
        inferred = h[Layout.inferred]!
        onboardings = h[Layout.onboardings]!
        checkpoints = h[Layout.checkpoints]!
        spanningSessions = h[Layout.spanningSessions]!
        sessionLog = h[Layout.sessionLog]!
        eventLog = h[Layout.eventLog]!
        sessionNames = h[Layout.sessionNames]!
        blockHeads = h[Layout.blockHeads]!
    }
}
