import BoardwalkCodec
import BoardwalkModel
import Foundation

@testable import BoardwalkStore

/// A fresh temporary directory per test (tests run in parallel; LMDB forbids opening one env twice).
func temporaryDirectory(_ name: String = #function) -> String {
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("boardwalk-store-tests")
    try? FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
    let template = base.appendingPathComponent("t-XXXXXX").path
    var bytes = Array(template.utf8CString)
    let dir = bytes.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }!
    return String(cString: dir)
}

extension Store.Options {
    /// `base` with a writer that folds the session log into `sessions` at every batch: for tests that read or damage
    /// `sessions` values themselves.
    static func foldingEveryBatch(_ base: Store.Options = Store.Options()) -> Store.Options {
        var options = base
        options.sessionLogLimits = SessionLogLimits(batches: 0, bytes: 0)
        options.eventLogLimits = EventLogLimits(batches: 0, bytes: 0)
        return options
    }
}

func removeDirectory(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}

/// A cheap, realistic event: analytics at a screen of one of a few onboardings, in a given session.
func simpleEvent(
    onboarding: Int, screen: Int, session: Int, time: Int64, eventID: String? = nil,
    payload: Payload = .analytics(.screenPresented), profile: String? = nil
) -> Event {
    Event(
        time: Timestamp(microseconds: time), session: session < 0 ? nil : "s\(session)", profile: profile,
        eventID: eventID,
        meta: Meta(
            onboardingID: "onb-\(onboarding)", screenClientID: "screen-\(screen)", screenIndex: screen, totalScreens: 10
        ),
        payload: payload)
}

/// The store of the damage tests: sessions s0 and s1 in one session-index bucket and one block (onboarding 0,
/// screen 0; s1 has two events), s500...s699 in later buckets and another block (screen 1).
func appendDamageFixture(_ store: Store) throws {
    try store.append([
        simpleEvent(onboarding: 0, screen: 0, session: 0, time: 10),
        simpleEvent(onboarding: 0, screen: 0, session: 1, time: 20),
        simpleEvent(onboarding: 0, screen: 0, session: 1, time: 30),
    ])
    try store.append((0..<200).map { simpleEvent(onboarding: 0, screen: 1, session: 500 + $0, time: 40 + Int64($0)) })
}

/// One `onboarding_started` event without `meta` per session id, at times `from`, `from + 1`, …: what the string
/// dictionary tests store (each session id is a new string).
func sessionStarts(_ sessions: [String], from: Int = 0) -> [Event] {
    sessions.enumerated().map { i, s in
        Event(
            time: Timestamp(microseconds: Int64(from + i)), session: s, meta: nil,
            payload: .analytics(.onboardingStarted))
    }
}

/// A store at `dir` given ``sessionStarts(_:from:)`` of `sessions` and closed, then opened again: a fresh `Store`,
/// whose readers' string table is empty.
func reopenedStore(at dir: String, holding sessions: [String]) throws -> Store {
    do {
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        try store.append(sessionStarts(sessions))
    }
    return try Store.open(at: dir)
}

/// `value`, a block stored under `key` whose bytes were changed, with the checksum that makes it pass again: the
/// block a writer's bug would store, for tests of what the readers check beyond the checksum.
func resealed(_ value: [UInt8], key: EventKey) -> [UInt8] {
    var crc = key.checksumSeed
    value.dropFirst(4).withUnsafeBytes { crc.update($0) }
    var out = value
    withUnsafeBytes(of: crc.value.littleEndian) { out.replaceSubrange(0..<4, with: $0) }
    return out
}
