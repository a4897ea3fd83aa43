// swift-format-ignore-file
// This file holds copies of documentation code blocks, compared with them line by line, so it keeps the
// documents' layout (aligned comments) rather than the formatter's.
import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore
import Foundation
import Testing

// The embedding guide of docs/storage.md ("The Swift API" and "Recording what an onboarding delegate receives"),
// compiled and run as written. Each `// doc block N` region below is a copy of the Nth ```swift block of that
// part of the document, and `docBlocksMatch` fails when the two differ (`import` lines aside: the document
// imports the `Boardwalk` umbrella, which this test target does not depend on), so an example can neither stop
// compiling nor drift from what the code does. Block 3 (the queries) runs in EmbeddingQueryGuideTests.

@Suite("The embedding guide in docs/storage.md")
struct EmbeddingGuideTests {
    @Test("the document's blocks are the code these tests compile")
    func docBlocksMatch() throws {
        let blocks = try GuideText.swiftBlocks()
        #expect(blocks.count == 4, "expected the API block, the recorder, the delegate and the queries")
        for index in 0..<min(3, blocks.count) {
            let difference = GuideText.firstDifference(GuideText.normalized(blocks[index]), try GuideText.region(index, in: #filePath))
            #expect(difference == nil, "docs/storage.md, swift block \(index), differs from its copy in EmbeddingGuideTests.swift: \(difference ?? "")")
        }
    }

    @Test("the Swift API block runs as written and its values are the store's")
    func swiftAPIBlock() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let t0 = Timestamp(iso8601: "2026-11-10T10:00:00Z")!
        func event(_ session: String, _ screen: Int, _ second: Int64, _ payload: Payload, id: String) -> Event {
            Event(time: Timestamp(microseconds: t0.microseconds + second * 1_000_000), session: session, eventID: id,
                  meta: Meta(onboardingID: "onb-1", screenClientID: "screen-\(screen)", screenIndex: screen, totalScreens: 6),
                  payload: payload)
        }
        let named = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
        // `events`: one session with two screens presented, one completed; `batch`: a second session on screen 5
        // (outside the scan's 0...3); `first` and `second`: an error without meta (no onboarding) and a repeat of
        // an event of `events` (a duplicate by event id).
        let events = [
            event(named, 0, 0, .analytics(.onboardingStarted), id: "e1"),
            event(named, 0, 0, .analytics(.screenPresented), id: "e2"),
            event(named, 0, 4, .analytics(.screenCompleted(elementID: "next", reply: nil)), id: "e3"),
            event(named, 1, 4, .analytics(.screenPresented), id: "e4"),
        ]
        let batch = [event("other", 5, 60, .analytics(.screenPresented), id: "e5")]
        let first = [Event(time: Timestamp(microseconds: t0.microseconds + 70_000_000), session: named, eventID: "e6",
                           meta: nil, payload: .error(OnboardingError(domain: "webkit", code: 4200, message: "offline")))]
        let second = [events[0]]
        let seen = try GuideBlocks.swiftAPI(
            path: dir + "/store", events: events, batch: batch, first: first, second: second,
            offsetBytes: [0, 0, 4, 0], from: t0, to: Timestamp(microseconds: t0.microseconds + 3_600_000_000),
            lastExportedSeq: 2, backupDirectory: dir + "/copy")

        #expect(seen.result.appended == 4 && seen.result.duplicates == 0 && seen.result.seqs == 0..<4)
        #expect(seen.soFar == 6, "4 + 1 + the error; the repeated event is a duplicate")
        #expect(seen.presented == 2, "screen 5 is outside screens 0...3")
        #expect(seen.inSession == 5, "the named session's four analytics events and its error")
        #expect(seen.exported == 3, "seqs 3 (e4), 4 (e5) and 5 (the error)")
        #expect(seen.stats.events == 6)
        #expect(seen.stats.sessions == 2)
        #expect(seen.stats.eventsByKind[.error] == 1)
        #expect(seen.stored.map(\.seq) == [0, 1, 2, 3, 4], "onb-1's events in key order; the error has no onboarding")
        #expect(seen.stored.first?.event == events[0])
        #expect(Set(seen.sessions.map(\.session)) == [named, "other"])
        #expect(seen.ids.count == 2)
        #expect(seen.elsewhere.count == 1, "the named session also has an event without a position")
        #expect(seen.why.count == 1 && seen.why[0].hasEventsWithoutPosition && !seen.why[0].inSeveralOnboardings)
        #expect(seen.report.isOK, "\(seen.report)")
        #expect(seen.checkpoint == [0, 0, 4, 0])
        #expect(seen.backupEvents == 6)
    }

    @Test("the recorder and the delegate store every kind the delegate receives, typed, as received")
    @MainActor
    func recorderRecordsEveryKind() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let recorder = try OnboardingRecorder(directory: URL(fileURLWithPath: dir + "/Application Support/events"),
                                              profileID: "profile-7")
        let delegate = OnboardingEvents(recorder: recorder)
        let controller = AdaptyOnboardingController(id: "controller-1")
        let sdk = SDKSession(onboardingID: "onb-quiz", screens: 4)

        delegate.onboardingController(controller, didFinishLoading: OnboardingsDidFinishLoadingAction(meta: sdk.meta(0)))
        for event in sdk.analyticsOfEveryKind() { delegate.onboardingController(controller, onAnalyticsEvent: event) }
        for action in sdk.stateUpdatesOfEveryKind() { delegate.onboardingController(controller, onStateUpdatedAction: action) }
        delegate.onboardingController(controller, onCustomAction: AdaptyOnboardingsCustomAction(actionId: "help", meta: sdk.meta(2)))
        delegate.onboardingController(controller, onPaywallAction: AdaptyOnboardingsOpenPaywallAction(actionId: "", meta: sdk.meta(3)))
        delegate.onboardingController(controller, didFailWithError: .webKit("The network connection was lost."))
        delegate.onboardingController(controller, onCloseAction: AdaptyOnboardingsCloseAction(actionId: "x", meta: sdk.meta(3)))
        #expect(controller.dismissed, "implementing onCloseAction replaces the SDK's default dismissal")
        recorder.flushAndWait()

        let stored = try recorder.store.read { try $0.events(inSession: "controller-1") }
        let expected: [(Payload, Meta?)] = [(.onboardingLoaded, sdk.boardwalkMeta(0))] + sdk.expectedAnalytics()
            + sdk.expectedStateUpdates() + [
                (.custom(actionID: "help"), sdk.boardwalkMeta(2)),
                (.openPaywall(actionID: ""), sdk.boardwalkMeta(3)),
                (.error(OnboardingError(domain: "AdaptyUIError", code: 4200, message: "The network connection was lost.")), nil),
                (.close(actionID: "x"), sdk.boardwalkMeta(3)),
            ]
        #expect(stored.count == expected.count)
        for (got, (payload, meta)) in zip(stored.map(\.event), expected) {
            #expect(got.payload == payload)
            #expect(got.meta == meta)
            #expect(got.session == "controller-1" && got.profile == "profile-7")
        }
        // Stamped in order of arrival, each with its own event id (what makes a retried append harmless).
        #expect(stored.map(\.event.time) == stored.map(\.event.time).sorted())
        #expect(Set(stored.compactMap(\.event.eventID)).count == stored.count)
        #expect(try recorder.store.check().isOK)
    }

    @Test("the recorder appends in batches of 50 before any flush, and flushAndWait stores the rest")
    func recorderBatches() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let recorder = try OnboardingRecorder(directory: URL(fileURLWithPath: dir + "/events"))
        let meta = Meta(onboardingID: "onb", screenClientID: "s0", screenIndex: 0, totalScreens: 2)
        for _ in 0..<120 { recorder.record(.analytics(.screenPresented), meta: meta, session: "c") }
        // Two batches of 50 are appended on the recorder's queue without a flush; wait for them by polling (at most
        // 10 s; nothing is timed).
        var storedBeforeFlush = 0
        for _ in 0..<10_000 {
            storedBeforeFlush = try recorder.store.read { try $0.stats().events }
            if storedBeforeFlush >= 100 { break }
            usleep(1_000)
        }
        #expect(storedBeforeFlush == 100, "20 events stay pending until a flush")
        recorder.flushAndWait()
        #expect(try recorder.store.read { try $0.stats().events } == 120)
        recorder.flushAndWait()
        #expect(try recorder.store.read { try $0.stats().events } == 120, "an empty flush stores nothing")
    }

    @Test("an event the store cannot hold is dropped alone; the recorder keeps recording")
    func recorderDropsOnlyTheUnstorableEvent() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let recorder = try OnboardingRecorder(directory: URL(fileURLWithPath: dir + "/events"))
        func meta(_ screen: Int) -> Meta { Meta(onboardingID: "onb", screenClientID: "s", screenIndex: screen, totalScreens: 2) }
        recorder.record(.analytics(.screenPresented), meta: meta(0), session: "c")
        recorder.record(.analytics(.screenPresented), meta: meta(Meta.maxScreenIndex + 1), session: "c")
        recorder.record(.analytics(.screenPresented), meta: meta(1), session: "c")
        recorder.flushAndWait()
        #expect(try recorder.store.read { try $0.events(inSession: "c") }.compactMap(\.event.meta?.screenIndex) == [0, 1])
        recorder.record(.onboardingLoaded, meta: meta(0), session: "d")
        recorder.flushAndWait()
        #expect(try recorder.store.read { try $0.stats().events } == 3, "the dropped event does not block later flushes")
    }

    @Test("readers on other threads see whole batches while the recorder appends")
    func readersWhileRecording() async throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let recorder = try OnboardingRecorder(directory: URL(fileURLWithPath: dir + "/events"))
        let meta = Meta(onboardingID: "onb", screenClientID: "s0", screenIndex: 0, totalScreens: 1)
        let total = 2_000
        let writer = Task.detached {
            for i in 0..<total { recorder.record(.analytics(.screenPresented), meta: meta, session: "c\(i / 10)") }
            recorder.flushAndWait()
        }
        let store = recorder.store
        let counts = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<2 {
                group.addTask {
                    var seen: [Int] = []
                    repeat {   // until the last batch (bounded, should the writer fail)
                        seen.append(try store.read { try $0.stats().events })
                    } while seen.last! < total && seen.count < 2_000_000
                    return seen
                }
            }
            var all: [[Int]] = []
            for try await seen in group { all.append(seen) }
            return all
        }
        await writer.value
        for seen in counts {
            #expect(seen == seen.sorted(), "a reader never sees the store go back")
            #expect(seen.allSatisfy { $0 % 50 == 0 }, "a read sees whole batches of 50, never part of one")
        }
        #expect(try store.check().isOK)
    }
}

/// What the Swift API block computed, for the assertions.
struct SwiftAPISeen {
    var result: AppendResult
    var soFar: Int
    var presented: Int, inSession: Int, exported: Int
    var stats: StoreStats
    var stored: [StoredEvent]
    var sessions: [SessionSummary]
    var ids: [StringID], elsewhere: [StringID], why: [SpanningSession]
    var report: CheckReport
    var checkpoint: [UInt8]?
    var backupEvents: Int
}

enum GuideBlocks {
    static func swiftAPI(path: String, events: [Event], batch: [Event], first: [Event], second: [Event],
                         offsetBytes: [UInt8], from: Timestamp, to: Timestamp, lastExportedSeq: UInt64,
                         backupDirectory: String) throws -> SwiftAPISeen {
        // doc block 0
        let store = try Store.open(at: path)                       // Store.Options(durability:initialMapSize:readOnly:create:)
        let result = try store.append(events)                      // AppendResult(appended, duplicates, seqs)
        try store.append(batch, checkpoint: Checkpoint(key: "import", value: offsetBytes))
        let soFar = try store.write { w in                         // one transaction; may be redone after map growth
            try w.append(first)                                    // only `w` in here: store.append throws .insideTransaction
            try w.append(second)
            try w.setCheckpoint(Checkpoint(key: "import", value: offsetBytes))
            return try w.snapshot.stats().events                   // reads see the transaction's own writes
        }

        var presented = 0, inSession = 0, exported = 0
        let stats = try store.read { s in                          // s: Snapshot, valid only inside
            // Borrowed, allocation-free scans: the view is valid only inside the closure; return false to stop.
            try s.forEachEvent(onboarding: "onb-1", screens: 0...3, time: from..<to) { view in
                if view.record.knownAnalyticsName == .screenPresented { presented += 1 }
                return true
            }
            try s.forEachEvent(inSession: "3F2504E0-4F89-11D3-9A0C-0305E82C3301") { view in
                inSession += 1                                     // view.kind, view.time, view.screenIndex, view.seq…
                return true
            }
            try s.forEachEvent(since: lastExportedSeq + 1) { view in   // seq order
                exported += 1
                return true
            }
            return try s.stats()                                   // events, sessions, onboardings, eventsByKind, timeRange, bytes…
        }
        // Owned values when convenient: [StoredEvent] (seq, event) and [SessionSummary] (id, session, firstTime).
        let (stored, sessions) = try store.read { s in
            (try s.events(onboarding: "onb-1", limit: 100), try s.sessions(ofOnboarding: "onb-1"))
        }
        // Ids only (no strings resolved), and the few sessions of an onboarding with events under another onboarding
        // key: every other session's events all lie in the onboarding's key range.
        let (ids, elsewhere, why) = try store.read { s in
            guard let onb1 = try s.id(of: "onb-1") else { return ([StringID](), [StringID](), [SpanningSession]()) }
            return (try s.sessionIDs(ofOnboarding: onb1),          // O(log N + its sessions)
                    try s.spanningSessions(ofOnboarding: onb1),    // O(spanning sessions of the store)
                    try s.spanningSessionEntries())                // id, inSeveralOnboardings, hasEventsWithoutPosition
        }
        let resumeAt = try store.read { try $0.checkpoint("import") }  // [UInt8]?: the last committed value, nil if none
        let report = try store.check()                             // CheckReport: isOK, problems
        try store.backup(to: backupDirectory)                      // a new or empty directory
        try store.foldLogs()                                       // fold the logs into events and sessions now
        // end doc block

        let copy = try Store.open(at: backupDirectory, options: Store.Options(readOnly: true))
        return SwiftAPISeen(
            result: result, soFar: soFar, presented: presented, inSession: inSession, exported: exported, stats: stats,
            stored: stored, sessions: sessions, ids: ids, elsewhere: elsewhere, why: why, report: report,
            checkpoint: resumeAt, backupEvents: try copy.read { try $0.stats().events })
    }
}

// doc block 1
/// Keeps what onboarding delegates receive in a store on the device.
final class OnboardingRecorder: @unchecked Sendable {   // `pending` is touched only on `queue`
    let store: Store                                     // read and query it from any thread
    private let profileID: String?
    private let queue = DispatchQueue(label: "onboarding-recorder")
    private var pending: [Event] = []

    init(directory: URL, profileID: String? = nil) throws {
        // Store.open creates the store's directory, not its parents (Application Support may not exist yet).
        try FileManager.default.createDirectory(at: directory.deletingLastPathComponent(),
                                                withIntermediateDirectories: true)
        store = try Store.open(at: directory.path)
        self.profileID = profileID
    }

    /// Records one event, stamped now. `meta` is nil only for errors, which reach the app outside the page.
    func record(_ payload: Payload, meta: Meta?, session: String) {
        let event = Event(
            time: Timestamp(microseconds: Int64(Date().timeIntervalSince1970 * 1_000_000)),
            session: session,                            // one presentation of the onboarding
            profile: profileID,
            eventID: UUID().uuidString,                  // makes a retried append idempotent
            meta: meta,
            payload: payload)
        queue.async {
            self.pending.append(event)
            if self.pending.count >= 50 { self.appendPending() }
        }
    }

    /// Appends what is pending, soon. Call it when an onboarding closes.
    func flush() {
        queue.async { self.appendPending() }
    }

    /// Appends what is pending and returns when it is durable. Call it when the app goes to the background.
    func flushAndWait() {
        queue.sync { self.appendPending() }
    }

    private func appendPending() {                       // on `queue`
        while !pending.isEmpty {
            do {
                try store.append(pending)                // durable when it returns
                pending.removeAll()
            } catch let error as StoreError where error.batchIndex != nil {
                // An event the store cannot hold (a screen index above Meta.maxScreenIndex) refuses the whole
                // batch, and the error says which event: drop it and append the rest.
                pending.remove(at: error.batchIndex!)
            } catch {
                // The disk (full, an I/O error) or a closed store: keep the events for the next flush.
                return
            }
        }
    }
}
// end doc block

// doc block 2
final class OnboardingEvents: AdaptyOnboardingControllerDelegate {
    let recorder: OnboardingRecorder
    init(recorder: OnboardingRecorder) { self.recorder = recorder }

    func onboardingController(_ c: AdaptyOnboardingController, didFinishLoading action: OnboardingsDidFinishLoadingAction) {
        recorder.record(.onboardingLoaded, meta: Meta(action.meta), session: c.id)
    }
    func onboardingController(_ c: AdaptyOnboardingController, onAnalyticsEvent event: AdaptyOnboardingsAnalyticsEvent) {
        let analytics: AnalyticsEvent = switch event {
        case .onboardingStarted: .onboardingStarted
        case .screenPresented: .screenPresented
        case .screenCompleted(_, let elementID, let reply): .screenCompleted(elementID: elementID, reply: reply)
        case .secondScreenPresented: .secondScreenPresented
        case .registrationScreenPresented: .registrationScreenPresented
        case .productsScreenPresented: .productsScreenPresented
        case .userEmailCollected: .userEmailCollected
        case .onboardingCompleted: .onboardingCompleted
        case .unknown(_, let name): .unknown(name: name)
        }
        recorder.record(.analytics(analytics), meta: Meta(event.meta), session: c.id)
    }
    func onboardingController(_ c: AdaptyOnboardingController, onStateUpdatedAction action: AdaptyOnboardingsStateUpdatedAction) {
        func choice(_ o: OnboardingsSelectParams) -> Choice { Choice(id: o.id, value: o.value, label: o.label) }
        let value: StateValue = switch action.params {
        case .select(let option): .select(choice(option))
        case .multiSelect(let options): .multiSelect(options.map(choice))   // the whole selection, not a delta
        case .input(.text(let text)): .input(.text(text))
        case .input(.email(let email)): .input(.email(email))
        case .input(.number(let number)): .input(.number(number))
        case .datePicker(let date): .datePicker(DateParts(year: date.year, month: date.month, day: date.day))
        }
        recorder.record(.stateUpdated(StateUpdate(elementID: action.elementId, value: value)),
                        meta: Meta(action.meta), session: c.id)
    }
    func onboardingController(_ c: AdaptyOnboardingController, onPaywallAction action: AdaptyOnboardingsOpenPaywallAction) {
        recorder.record(.openPaywall(actionID: action.actionId), meta: Meta(action.meta), session: c.id)
    }
    func onboardingController(_ c: AdaptyOnboardingController, onCustomAction action: AdaptyOnboardingsCustomAction) {
        recorder.record(.custom(actionID: action.actionId), meta: Meta(action.meta), session: c.id)
    }
    func onboardingController(_ c: AdaptyOnboardingController, onCloseAction action: AdaptyOnboardingsCloseAction) {
        recorder.record(.close(actionID: action.actionId), meta: Meta(action.meta), session: c.id)
        recorder.flush()
        c.dismiss(animated: true)                        // what the SDK's default implementation does
    }
    func onboardingController(_ c: AdaptyOnboardingController, didFailWithError error: AdaptyUIError) {
        let ns = error as NSError                        // AdaptyUIError.webKit: code 4200
        recorder.record(.error(OnboardingError(domain: ns.domain, code: ns.code, message: ns.localizedDescription)),
                        meta: nil, session: c.id)
    }
}

extension Meta {
    init(_ meta: AdaptyOnboardingsMetaParams) {
        self.init(onboardingID: meta.onboardingId, screenClientID: meta.screenClientId,
                  screenIndex: meta.screenIndex, totalScreens: meta.screensTotal)
    }
}
// end doc block

// MARK: Stand-ins for the Adapty iOS SDK 3.x types the delegate block names, with the SDK's names and shapes
// (AdaptyOnboardingControllerDelegate, AdaptyOnboardingsAnalyticsEvent, OnboardingsStateUpdatedParams, …), so
// that the block compiles here as an app would compile it against the SDK.

@MainActor
protocol AdaptyOnboardingControllerDelegate: AnyObject {
    func onboardingController(_ controller: AdaptyOnboardingController, didFinishLoading action: OnboardingsDidFinishLoadingAction)
    func onboardingController(_ controller: AdaptyOnboardingController, onCloseAction action: AdaptyOnboardingsCloseAction)
    func onboardingController(_ controller: AdaptyOnboardingController, onPaywallAction action: AdaptyOnboardingsOpenPaywallAction)
    func onboardingController(_ controller: AdaptyOnboardingController, onCustomAction action: AdaptyOnboardingsCustomAction)
    func onboardingController(_ controller: AdaptyOnboardingController, onStateUpdatedAction action: AdaptyOnboardingsStateUpdatedAction)
    func onboardingController(_ controller: AdaptyOnboardingController, onAnalyticsEvent event: AdaptyOnboardingsAnalyticsEvent)
    func onboardingController(_ controller: AdaptyOnboardingController, didFailWithError error: AdaptyUIError)
}

@MainActor
final class AdaptyOnboardingController {
    let id: String
    private(set) var dismissed = false
    init(id: String) { self.id = id }
    func dismiss(animated: Bool) { dismissed = true }
}

struct AdaptyOnboardingsMetaParams: Sendable, Hashable {
    let onboardingId: String
    let screenClientId: String
    let screenIndex: Int
    let screensTotal: Int
}

enum AdaptyOnboardingsAnalyticsEvent: Sendable, Hashable {
    case unknown(meta: AdaptyOnboardingsMetaParams, name: String)
    case onboardingStarted(meta: AdaptyOnboardingsMetaParams)
    case screenPresented(meta: AdaptyOnboardingsMetaParams)
    case screenCompleted(meta: AdaptyOnboardingsMetaParams, elementId: String?, reply: String?)
    case secondScreenPresented(meta: AdaptyOnboardingsMetaParams)
    case registrationScreenPresented(meta: AdaptyOnboardingsMetaParams)
    case productsScreenPresented(meta: AdaptyOnboardingsMetaParams)
    case userEmailCollected(meta: AdaptyOnboardingsMetaParams)
    case onboardingCompleted(meta: AdaptyOnboardingsMetaParams)

    var meta: AdaptyOnboardingsMetaParams {
        switch self {
        case .unknown(let meta, _), .onboardingStarted(let meta), .screenPresented(let meta),
             .screenCompleted(let meta, _, _), .secondScreenPresented(let meta), .registrationScreenPresented(let meta),
             .productsScreenPresented(let meta), .userEmailCollected(let meta), .onboardingCompleted(let meta):
            meta
        }
    }
}

struct AdaptyOnboardingsStateUpdatedAction: Sendable, Hashable {
    let elementId: String
    let meta: AdaptyOnboardingsMetaParams
    let params: OnboardingsStateUpdatedParams
}

enum OnboardingsStateUpdatedParams: Sendable, Hashable {
    case select(OnboardingsSelectParams)
    case multiSelect([OnboardingsSelectParams])
    case input(OnboardingsInputParams)
    case datePicker(OnboardingsDatePickerParams)
}

struct OnboardingsSelectParams: Sendable, Hashable {
    let id: String
    let value: String
    let label: String
}

enum OnboardingsInputParams: Sendable, Hashable {
    case text(String)
    case email(String)
    case number(Double)
}

struct OnboardingsDatePickerParams: Sendable, Hashable {
    let day: Int?
    let month: Int?
    let year: Int?
}

struct AdaptyOnboardingsOpenPaywallAction: Sendable, Hashable {
    let actionId: String
    let meta: AdaptyOnboardingsMetaParams
}

struct AdaptyOnboardingsCustomAction: Sendable, Hashable {
    let actionId: String
    let meta: AdaptyOnboardingsMetaParams
}

struct AdaptyOnboardingsCloseAction: Sendable, Hashable {
    let actionId: String
    let meta: AdaptyOnboardingsMetaParams
}

struct OnboardingsDidFinishLoadingAction: Sendable, Hashable {
    let meta: AdaptyOnboardingsMetaParams
}

/// The SDK's error: `webKit` carries the web view's error (code 4200 in domain `AdaptyUIError`).
enum AdaptyUIError: CustomNSError {
    case webKit(String)

    static var errorDomain: String { "AdaptyUIError" }
    var errorCode: Int { 4200 }
    var errorUserInfo: [String: Any] {
        switch self {
        case .webKit(let text): [NSLocalizedDescriptionKey: text]
        }
    }
}

/// One onboarding as the SDK describes it, and what each SDK value must become in Boardwalk.
struct SDKSession {
    let onboardingID: String
    let screens: Int

    func meta(_ screen: Int) -> AdaptyOnboardingsMetaParams {
        AdaptyOnboardingsMetaParams(onboardingId: onboardingID, screenClientId: screen == screens - 1 ? "final" : "screen-\(screen)",
                                    screenIndex: screen, screensTotal: screens)
    }

    func boardwalkMeta(_ screen: Int) -> Meta {
        Meta(onboardingID: onboardingID, screenClientID: screen == screens - 1 ? "final" : "screen-\(screen)",
             screenIndex: screen, totalScreens: screens)
    }

    func analyticsOfEveryKind() -> [AdaptyOnboardingsAnalyticsEvent] {
        [.onboardingStarted(meta: meta(0)), .screenPresented(meta: meta(0)),
         .screenCompleted(meta: meta(0), elementId: "next", reply: "yes"), .screenCompleted(meta: meta(0), elementId: nil, reply: nil),
         .secondScreenPresented(meta: meta(1)), .registrationScreenPresented(meta: meta(1)),
         .productsScreenPresented(meta: meta(2)), .userEmailCollected(meta: meta(2)),
         .unknown(meta: meta(2), name: "navigation_failed"), .onboardingCompleted(meta: meta(3))]
    }

    func expectedAnalytics() -> [(Payload, Meta?)] {
        let events: [(AnalyticsEvent, Int)] = [
            (.onboardingStarted, 0), (.screenPresented, 0), (.screenCompleted(elementID: "next", reply: "yes"), 0),
            (.screenCompleted(elementID: nil, reply: nil), 0), (.secondScreenPresented, 1), (.registrationScreenPresented, 1),
            (.productsScreenPresented, 2), (.userEmailCollected, 2), (.unknown(name: "navigation_failed"), 2),
            (.onboardingCompleted, 3),
        ]
        return events.map { (.analytics($0.0), boardwalkMeta($0.1)) }
    }

    func stateUpdatesOfEveryKind() -> [AdaptyOnboardingsStateUpdatedAction] {
        let pro = OnboardingsSelectParams(id: "o2", value: "pro", label: "Pro")
        let fit = OnboardingsSelectParams(id: "g1", value: "fit", label: "Get fit")
        return [
            .init(elementId: "level", meta: meta(1), params: .select(pro)),
            .init(elementId: "goals", meta: meta(1), params: .multiSelect([fit, pro])),
            .init(elementId: "goals", meta: meta(1), params: .multiSelect([])),
            .init(elementId: "name", meta: meta(2), params: .input(.text("Ann"))),
            .init(elementId: "email", meta: meta(2), params: .input(.email("ann@example.com"))),
            .init(elementId: "age", meta: meta(2), params: .input(.number(25))),
            .init(elementId: "birthday", meta: meta(2), params: .datePicker(OnboardingsDatePickerParams(day: nil, month: nil, year: 1995))),
            .init(elementId: "start", meta: meta(2), params: .datePicker(OnboardingsDatePickerParams(day: 30, month: 11, year: 2026))),
        ]
    }

    func expectedStateUpdates() -> [(Payload, Meta?)] {
        let pro = Choice(id: "o2", value: "pro", label: "Pro")
        let fit = Choice(id: "g1", value: "fit", label: "Get fit")
        let updates: [(String, StateValue, Int)] = [
            ("level", .select(pro), 1), ("goals", .multiSelect([fit, pro]), 1), ("goals", .multiSelect([]), 1),
            ("name", .input(.text("Ann")), 2), ("email", .input(.email("ann@example.com")), 2), ("age", .input(.number(25)), 2),
            ("birthday", .datePicker(DateParts(year: 1995)), 2), ("start", .datePicker(DateParts(year: 2026, month: 11, day: 30)), 2),
        ]
        return updates.map { (.stateUpdated(StateUpdate(elementID: $0.0, value: $0.1)), boardwalkMeta($0.2)) }
    }
}

/// The ```swift blocks of the embedding guide in docs/storage.md, and the copies of them in test files.
enum GuideText {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    static let documentPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/storage.md").path

    /// The bodies of the ```swift blocks from "## The Swift API" up to the next `## ` heading.
    static func swiftBlocks() throws -> [String] {
        let text = try String(contentsOfFile: documentPath, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: "## The Swift API") else {
            throw Missing(description: "\(documentPath): no heading \"## The Swift API\"")
        }
        let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("## ") } ?? lines.count
        var blocks: [String] = []
        var current: [String]?
        for line in lines[start..<end] {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The lines between `// doc block <index>` and the next `// end doc block` in the file at `path`, normalized.
    static func region(_ index: Int, in path: String) throws -> String {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        guard let begin = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "// doc block \(index)" }),
              let end = lines[begin...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "// end doc block" })
        else { throw Missing(description: "\(path): no region \"// doc block \(index)\" … \"// end doc block\"") }
        return normalized(lines[(begin + 1)..<end].joined(separator: "\n"))
    }

    /// The first line where `document` and `copy` differ, both quoted with its number (1-based, in the normalized
    /// block); `nil` when they are equal.
    static func firstDifference(_ document: String, _ copy: String) -> String? {
        let a = document.split(separator: "\n", omittingEmptySubsequences: false)
        let b = copy.split(separator: "\n", omittingEmptySubsequences: false)
        guard a != b else { return nil }
        let i = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
        func line(_ lines: [Substring]) -> String { i < lines.count ? "\"\(lines[i])\"" : "(end of block)" }
        return "line \(i + 1): the document has \(line(a)), the copy \(line(b))"
    }

    /// The code without `import` lines, trailing spaces, leading and trailing blank lines, and the indentation
    /// common to its lines.
    static func normalized(_ code: String) -> String {
        var lines = code.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            var line = Substring(line)
            while line.last == " " { line.removeLast() }
            return line
        }
        lines.removeAll { $0.hasPrefix("import ") }
        while lines.first?.isEmpty == true { lines.removeFirst() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        let indent = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { $0.isEmpty ? "" : String($0.dropFirst(indent)) }.joined(separator: "\n")
    }
}
